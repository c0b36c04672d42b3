// commscope::h5's internal wrappers of HDF5's C API, shared by the library's source files (h5.cpp:
// errors, handles, attributes, groups and files; tables.cpp: datasets, compound tables and 1-D
// datasets). Every HDF5 C call is made through checked() (or followed by throw_hdf5_error()),
// which turns a failure into an Error carrying what failed and HDF5's error stack.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commscope/h5/h5.hpp"

namespace commscope::h5::detail {

// HDF5 prints its error stack to stderr by default; we report it in Error instead. Thread-safe
// HDF5 builds (Debian's included) keep this setting per thread, hence thread_local.
inline void silence_hdf5_printing() noexcept {
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

// H5Ewalk2 callback: append each entry's description. Must not throw into C.
inline herr_t collect_description(unsigned /*depth*/, const H5E_error2_t* entry, void* data) noexcept {
  try {
    auto* stack = static_cast<std::vector<std::string>*>(data);
    if (entry->desc != nullptr && entry->desc[0] != '\0') {
      // Some descriptions embed ctime()'s newline ("time = ...\n, name = ..."): keep one line.
      std::string text(entry->desc);
      for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) {
        text.erase(at, 1);
        if (at < text.size() && text[at] != ',') text.insert(at, 1, ' ');
      }
      stack->push_back(std::move(text));
    } else if (entry->func_name != nullptr) {
      stack->emplace_back(std::string(entry->func_name) + "() failed");
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

// The current thread's HDF5 error stack, outermost (the API call) first.
inline std::vector<std::string> hdf5_error_stack() {
  std::vector<std::string> stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_description, &stack);
  return stack;
}

// Throw Error(what(), the error stack of the HDF5 call that just failed). The stack is read
// before what() runs, since any further HDF5 call (describe() makes some) clears it.
template <class What>
[[noreturn]] void throw_hdf5_error(What&& what) {
  std::vector<std::string> stack = hdf5_error_stack();
  throw Error(what(), std::move(stack));
}

// Runs one HDF5 call. A negative result (HDF5's failure value for herr_t, hid_t, htri_t, ssize_t
// and the class/cset/pad enums) throws Error; `what` is only evaluated on failure.
template <class Call, class What>
auto checked(Call&& call, What&& what) {
  silence_hdf5_printing();
  const auto result = call();
  if (result < 0) throw_hdf5_error(what);
  return result;
}

// A name from one of HDF5's "call once for the length, again for the text" getters.
template <class Get>
std::string read_name(Get&& get) {
  const ssize_t length = get(nullptr, 0);
  if (length < 0) return {};
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  if (get(text.data(), text.size()) < 0) return {};
  text.resize(static_cast<std::size_t>(length));
  return text;
}

// "file:/path/in/file" for messages; never throws an HDF5 error.
inline std::string describe(hid_t id) {
  silence_hdf5_printing();
  const std::string file = read_name([id](char* buf, std::size_t size) { return H5Fget_name(id, buf, size); });
  if (file.empty()) return "<closed or invalid HDF5 object>";
  std::string path = read_name([id](char* buf, std::size_t size) { return H5Iget_name(id, buf, size); });
  return file + ":" + (path.empty() ? std::string("?") : path);
}

// 'text'. Built by appending: GCC 12 warns falsely (-Wrestrict) about "'" + std::string(...).
inline std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

inline std::string attribute_label(hid_t object, const std::string& name) {
  return "attribute " + quoted(name) + " of " + describe(object);
}

// --- closing identifiers

inline herr_t close_id(hid_t id) noexcept {
  switch (H5Iget_type(id)) {
    case H5I_FILE:
      return H5Fclose(id);
    case H5I_GROUP:
      return H5Gclose(id);
    case H5I_DATASET:
      return H5Dclose(id);
    case H5I_DATATYPE:
      return H5Tclose(id);
    case H5I_DATASPACE:
      return H5Sclose(id);
    case H5I_ATTR:
      return H5Aclose(id);
    case H5I_GENPROP_LST:
      return H5Pclose(id);
    default:
      return H5Idec_ref(id) < 0 ? -1 : 0;
  }
}

// --- property lists, dataspaces and datatypes

inline Handle create_plist(hid_t plist_class, const char* what) {
  return Handle(checked([&] { return H5Pcreate(plist_class); }, [&] { return std::string("H5Pcreate ") + what; }));
}

// Link creation properties that create missing intermediate groups ("a/b/c").
inline Handle intermediate_groups_plist() {
  Handle lcpl = create_plist(H5P_LINK_CREATE, "link-create list");
  checked([&] { return H5Pset_create_intermediate_group(lcpl.id(), 1); },
          [] { return std::string("H5Pset_create_intermediate_group"); });
  return lcpl;
}

inline Handle scalar_space() {
  return Handle(checked([] { return H5Screate(H5S_SCALAR); }, [] { return std::string("H5Screate scalar"); }));
}

inline Handle space_1d(hsize_t size, hsize_t max_size) {
  return Handle(checked([&] { return H5Screate_simple(1, &size, &max_size); },
                        [&] { return "H5Screate_simple [" + std::to_string(size) + "]"; }));
}

inline Handle copy_type(hid_t type) {
  return Handle(checked([&] { return H5Tcopy(type); }, [] { return std::string("H5Tcopy"); }));
}

// A string type: `size` bytes or H5T_VARIABLE.
inline Handle string_type(std::size_t size, H5T_cset_t cset, H5T_str_t pad) {
  Handle type = copy_type(H5T_C_S1);
  checked([&] { return H5Tset_size(type.id(), size); }, [&] { return "H5Tset_size " + std::to_string(size); });
  checked([&] { return H5Tset_cset(type.id(), cset); }, [] { return std::string("H5Tset_cset"); });
  checked([&] { return H5Tset_strpad(type.id(), pad); }, [] { return std::string("H5Tset_strpad"); });
  return type;
}

inline Handle vlen_utf8_type() {
  return string_type(H5T_VARIABLE, H5T_CSET_UTF8, H5T_STR_NULLTERM);
}

inline H5T_class_t type_class(hid_t type) {
  return checked([&] { return H5Tget_class(type); }, [] { return std::string("H5Tget_class"); });
}

inline std::size_t type_size(hid_t type) {
  silence_hdf5_printing();
  const std::size_t size = H5Tget_size(type);  // 0 on failure
  if (size == 0) throw_hdf5_error([] { return std::string("H5Tget_size"); });
  return size;
}

inline std::size_t point_count(hid_t space) {
  return static_cast<std::size_t>(checked([&] { return H5Sget_simple_extent_npoints(space); },
                                          [] { return std::string("H5Sget_simple_extent_npoints"); }));
}

inline bool is_numeric(H5T_class_t cls) {
  return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

// --- attributes

// Create (replacing) attribute `name` on `object` and write `data` (nullptr: nothing to write).
inline void write_attribute(hid_t object, std::string_view name_view, hid_t file_type, hid_t mem_type, hid_t space,
                            const void* data) {
  const std::string name(name_view);
  const htri_t exists = checked([&] { return H5Aexists(object, name.c_str()); },
                                [&] { return "H5Aexists " + attribute_label(object, name); });
  if (exists > 0) {
    checked([&] { return H5Adelete(object, name.c_str()); },
            [&] { return "H5Adelete " + attribute_label(object, name); });
  }
  Handle attr(checked([&] { return H5Acreate2(object, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT); },
                      [&] { return "H5Acreate2 " + attribute_label(object, name); }));
  if (data != nullptr) {
    checked([&] { return H5Awrite(attr.id(), mem_type, data); },
            [&] { return "H5Awrite " + attribute_label(object, name); });
  }
}

template <class V>
void write_numeric_attribute(hid_t object, std::string_view name, hid_t file_type, hid_t mem_type,
                             const std::vector<V>& values) {
  Handle space = space_1d(values.size(), values.size());
  write_attribute(object, name, file_type, mem_type, space.id(), values.empty() ? nullptr : values.data());
}

// An open attribute with its type, element count and type class.
struct OpenAttribute {
  std::string label;
  Handle attr;
  Handle type;
  std::size_t count = 0;
  H5T_class_t cls = H5T_NO_CLASS;
};

inline OpenAttribute open_attribute(hid_t object, std::string_view name_view) {
  const std::string name(name_view);
  OpenAttribute a;
  a.attr = Handle(checked([&] { return H5Aopen(object, name.c_str(), H5P_DEFAULT); },
                          [&] { return "H5Aopen " + attribute_label(object, name); }));
  a.label = attribute_label(object, name);
  a.type = Handle(checked([&] { return H5Aget_type(a.attr.id()); }, [&] { return "H5Aget_type " + a.label; }));
  Handle space(checked([&] { return H5Aget_space(a.attr.id()); }, [&] { return "H5Aget_space " + a.label; }));
  a.count = point_count(space.id());
  a.cls = type_class(a.type.id());
  return a;
}

template <class V>
std::vector<V> read_numeric_attribute(hid_t object, std::string_view name, hid_t mem_type) {
  const OpenAttribute a = open_attribute(object, name);
  if (!is_numeric(a.cls)) throw Error(a.label + " is not a number");
  std::vector<V> values(a.count);
  if (!values.empty()) {
    checked([&] { return H5Aread(a.attr.id(), mem_type, values.data()); }, [&] { return "H5Aread " + a.label; });
  }
  return values;
}

template <class V>
V read_scalar_attribute(hid_t object, std::string_view name, hid_t mem_type) {
  const std::vector<V> values = read_numeric_attribute<V>(object, name, mem_type);
  if (values.size() != 1) {
    throw Error("attribute " + quoted(name) + " of " + describe(object) + " has " + std::to_string(values.size()) +
                " elements, expected 1");
  }
  return values.front();
}

// Frees the strings HDF5 allocated for a variable-length string read.
struct VlenStrings {
  std::vector<char*> pointers;
  explicit VlenStrings(std::size_t count) : pointers(count, nullptr) {}
  VlenStrings(const VlenStrings&) = delete;
  VlenStrings& operator=(const VlenStrings&) = delete;
  ~VlenStrings() {
    for (char* p : pointers) {
      if (p != nullptr) H5free_memory(p);
    }
  }
};

// Every element of a string attribute or dataset, variable- or fixed-length: `file_type` is its
// stored type, `read(mem_type, buffer)` reads all `count` elements (H5Aread or H5Dread).
template <class Read>
std::vector<std::string> read_string_elements(hid_t file_type, std::size_t count, const std::string& label,
                                              Read&& read) {
  const htri_t variable =
      checked([&] { return H5Tis_variable_str(file_type); }, [&] { return "H5Tis_variable_str " + label; });
  const H5T_cset_t cset = checked([&] { return H5Tget_cset(file_type); }, [&] { return "H5Tget_cset " + label; });
  std::vector<std::string> values;
  values.reserve(count);
  if (variable > 0) {
    Handle mem_type = string_type(H5T_VARIABLE, cset, H5T_STR_NULLTERM);
    VlenStrings buffer(count);
    if (count > 0) read(mem_type.id(), static_cast<void*>(buffer.pointers.data()));
    for (const char* p : buffer.pointers) values.emplace_back(p != nullptr ? p : "");
  } else {
    // Read the bytes as stored, then drop the padding.
    const std::size_t size = type_size(file_type);
    const H5T_str_t pad = checked([&] { return H5Tget_strpad(file_type); }, [&] { return "H5Tget_strpad " + label; });
    Handle mem_type = string_type(size, cset, pad);
    std::vector<char> buffer(count * size);
    if (count > 0) read(mem_type.id(), static_cast<void*>(buffer.data()));
    for (std::size_t i = 0; i < count; ++i) {
      std::string_view text(buffer.data() + i * size, size);
      text = text.substr(0, text.find('\0'));
      if (pad == H5T_STR_SPACEPAD) text = text.substr(0, text.find_last_not_of(' ') + 1);
      values.emplace_back(text);
    }
  }
  return values;
}

// Every element of a string attribute, variable- or fixed-length.
inline std::vector<std::string> read_string_attribute(hid_t object, std::string_view name) {
  const OpenAttribute a = open_attribute(object, name);
  if (a.cls != H5T_STRING) throw Error(a.label + " is not a string");
  return read_string_elements(a.type.id(), a.count, a.label, [&](hid_t mem_type, void* buffer) {
    checked([&] { return H5Aread(a.attr.id(), mem_type, buffer); }, [&] { return "H5Aread " + a.label; });
  });
}

// H5Aiterate2 callback: append each attribute's name. Must not throw into C.
inline herr_t collect_attribute_name(hid_t /*location*/, const char* name, const H5A_info_t* /*info*/,
                                     void* data) noexcept {
  try {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

// --- datasets

inline Handle open_dataset_handle(hid_t parent, const std::string& name) {
  return Handle(checked([&] { return H5Dopen2(parent, name.c_str(), H5P_DEFAULT); },
                        [&] { return "H5Dopen2 dataset " + quoted(name) + " in " + describe(parent); }));
}

inline Handle dataset_space(hid_t dataset) {
  return Handle(checked([&] { return H5Dget_space(dataset); }, [&] { return "H5Dget_space " + describe(dataset); }));
}

inline Handle dataset_type(hid_t dataset) {
  return Handle(checked([&] { return H5Dget_type(dataset); }, [&] { return "H5Dget_type " + describe(dataset); }));
}

// A contiguous 1-D dataset holding `count` elements of `data`.
inline void write_1d(Group& parent, std::string_view name_view, hid_t file_type, hid_t mem_type, const void* data,
                     std::size_t count) {
  const std::string name(name_view);
  Handle space = space_1d(count, count);
  Handle lcpl = intermediate_groups_plist();
  Handle dataset(checked(
      [&] { return H5Dcreate2(parent.id(), name.c_str(), file_type, space.id(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT); },
      [&] { return "H5Dcreate2 dataset " + quoted(name) + " in " + describe(parent.id()); }));
  if (count > 0) {
    checked([&] { return H5Dwrite(dataset.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data); },
            [&] { return "H5Dwrite " + describe(dataset.id()); });
  }
}

template <class V>
std::vector<V> read_1d(const Group& parent, std::string_view name, hid_t mem_type) {
  Handle dataset = open_dataset_handle(parent.id(), std::string(name));
  Handle type = dataset_type(dataset.id());
  if (!is_numeric(type_class(type.id()))) throw Error("dataset " + describe(dataset.id()) + " is not numeric");
  Handle space = dataset_space(dataset.id());
  std::vector<V> values(point_count(space.id()));
  if (!values.empty()) {
    checked([&] { return H5Dread(dataset.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()); },
            [&] { return "H5Dread " + describe(dataset.id()); });
  }
  return values;
}

}  // namespace commscope::h5::detail
