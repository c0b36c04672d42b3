// commscope::h5. Every HDF5 C call is made in this file, through checked() (or followed by
// throw_hdf5_error()), which turns a failure into an Error carrying what failed and HDF5's error
// stack; the public classes only combine these small wrappers.
#include "commscope/h5/h5.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

namespace commscope::h5 {
namespace {

// HDF5 1.10 closes the files still open at exit (H5_term_library, registered with atexit), and
// crashes in it on a file whose close failed after a write error (a full disk): every file of ours
// is closed by its owner, so the library's exit handler is not registered. H5dont_atexit must run
// before any other HDF5 call, hence a static initializer.
[[maybe_unused]] const bool kNoExitHandler = H5dont_atexit() >= 0;

// HDF5 prints its error stack to stderr by default; we report it in Error instead. Thread-safe
// HDF5 builds (Debian's included) keep this setting per thread, hence thread_local.
void silence_hdf5_printing() noexcept {
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

// H5Ewalk2 callback: append each entry's description. Must not throw into C.
herr_t collect_description(unsigned /*depth*/, const H5E_error2_t* entry, void* data) noexcept {
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
std::vector<std::string> hdf5_error_stack() {
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
std::string describe(hid_t id) {
  silence_hdf5_printing();
  const std::string file = read_name([id](char* buf, std::size_t size) { return H5Fget_name(id, buf, size); });
  if (file.empty()) return "<closed or invalid HDF5 object>";
  std::string path = read_name([id](char* buf, std::size_t size) { return H5Iget_name(id, buf, size); });
  return file + ":" + (path.empty() ? std::string("?") : path);
}

// 'text'. Built by appending: GCC 12 warns falsely (-Wrestrict) about "'" + std::string(...).
std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

std::string attribute_label(hid_t object, const std::string& name) {
  return "attribute " + quoted(name) + " of " + describe(object);
}

// --- closing identifiers

herr_t close_id(hid_t id) noexcept {
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

Handle create_plist(hid_t plist_class, const char* what) {
  return Handle(checked([&] { return H5Pcreate(plist_class); }, [&] { return std::string("H5Pcreate ") + what; }));
}

// Link creation properties that create missing intermediate groups ("a/b/c").
Handle intermediate_groups_plist() {
  Handle lcpl = create_plist(H5P_LINK_CREATE, "link-create list");
  checked([&] { return H5Pset_create_intermediate_group(lcpl.id(), 1); },
          [] { return std::string("H5Pset_create_intermediate_group"); });
  return lcpl;
}

Handle scalar_space() {
  return Handle(checked([] { return H5Screate(H5S_SCALAR); }, [] { return std::string("H5Screate scalar"); }));
}

Handle space_1d(hsize_t size, hsize_t max_size) {
  return Handle(checked([&] { return H5Screate_simple(1, &size, &max_size); },
                        [&] { return "H5Screate_simple [" + std::to_string(size) + "]"; }));
}

Handle copy_type(hid_t type) {
  return Handle(checked([&] { return H5Tcopy(type); }, [] { return std::string("H5Tcopy"); }));
}

// A string type: `size` bytes or H5T_VARIABLE.
Handle string_type(std::size_t size, H5T_cset_t cset, H5T_str_t pad) {
  Handle type = copy_type(H5T_C_S1);
  checked([&] { return H5Tset_size(type.id(), size); }, [&] { return "H5Tset_size " + std::to_string(size); });
  checked([&] { return H5Tset_cset(type.id(), cset); }, [] { return std::string("H5Tset_cset"); });
  checked([&] { return H5Tset_strpad(type.id(), pad); }, [] { return std::string("H5Tset_strpad"); });
  return type;
}

Handle vlen_utf8_type() {
  return string_type(H5T_VARIABLE, H5T_CSET_UTF8, H5T_STR_NULLTERM);
}

H5T_class_t type_class(hid_t type) {
  return checked([&] { return H5Tget_class(type); }, [] { return std::string("H5Tget_class"); });
}

std::size_t type_size(hid_t type) {
  silence_hdf5_printing();
  const std::size_t size = H5Tget_size(type);  // 0 on failure
  if (size == 0) throw_hdf5_error([] { return std::string("H5Tget_size"); });
  return size;
}

std::size_t point_count(hid_t space) {
  return static_cast<std::size_t>(checked([&] { return H5Sget_simple_extent_npoints(space); },
                                          [] { return std::string("H5Sget_simple_extent_npoints"); }));
}

bool is_numeric(H5T_class_t cls) {
  return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

// --- attributes

// Create (replacing) attribute `name` on `object` and write `data` (nullptr: nothing to write).
void write_attribute(hid_t object, std::string_view name_view, hid_t file_type, hid_t mem_type, hid_t space,
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

OpenAttribute open_attribute(hid_t object, std::string_view name_view) {
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
std::vector<std::string> read_string_attribute(hid_t object, std::string_view name) {
  const OpenAttribute a = open_attribute(object, name);
  if (a.cls != H5T_STRING) throw Error(a.label + " is not a string");
  return read_string_elements(a.type.id(), a.count, a.label, [&](hid_t mem_type, void* buffer) {
    checked([&] { return H5Aread(a.attr.id(), mem_type, buffer); }, [&] { return "H5Aread " + a.label; });
  });
}

// H5Aiterate2 callback: append each attribute's name. Must not throw into C.
herr_t collect_attribute_name(hid_t /*location*/, const char* name, const H5A_info_t* /*info*/, void* data) noexcept {
  try {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

// --- datasets

Handle open_dataset_handle(hid_t parent, const std::string& name) {
  return Handle(checked([&] { return H5Dopen2(parent, name.c_str(), H5P_DEFAULT); },
                        [&] { return "H5Dopen2 dataset " + quoted(name) + " in " + describe(parent); }));
}

Handle dataset_space(hid_t dataset) {
  return Handle(checked([&] { return H5Dget_space(dataset); }, [&] { return "H5Dget_space " + describe(dataset); }));
}

Handle dataset_type(hid_t dataset) {
  return Handle(checked([&] { return H5Dget_type(dataset); }, [&] { return "H5Dget_type " + describe(dataset); }));
}

// A contiguous 1-D dataset holding `count` elements of `data`.
void write_1d(Group& parent, std::string_view name_view, hid_t file_type, hid_t mem_type, const void* data,
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

}  // namespace

// ---------------------------------------------------------------------------------------- Error

std::string failure_cause(const std::vector<std::string>& hdf5_stack) {
  // The system's reason, where HDF5 passes one on: "..., errno = 28, error message = 'No space
  // left on device', ..." (the entry also holds a time, a buffer address and byte counts).
  static constexpr std::string_view kMessage = "error message = '";
  for (const std::string& entry : hdf5_stack) {
    const std::size_t at = entry.find(kMessage);
    if (at == std::string::npos) continue;
    const std::size_t from = at + kMessage.size();
    const std::size_t to = entry.find('\'', from);
    if (to != std::string::npos && to > from) return entry.substr(from, to - from);
  }
  if (hdf5_stack.empty()) return "HDF5 gave no reason";
  return hdf5_stack.back();  // the innermost entry is the most specific
}

Error::Error(const std::string& what)
    : std::runtime_error(what), stack_(std::make_shared<const std::vector<std::string>>()) {}

Error::Error(const std::string& what, std::vector<std::string> hdf5_stack)
    : std::runtime_error(what + ": " + failure_cause(hdf5_stack)),
      stack_(std::make_shared<const std::vector<std::string>>(std::move(hdf5_stack))) {}

// --------------------------------------------------------------------------------------- Handle

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
  }
  return *this;
}

bool Handle::valid() const noexcept {
  if (id_ < 0) return false;
  silence_hdf5_printing();
  return H5Iis_valid(id_) > 0;
}

void Handle::close() {
  if (!valid()) {
    id_ = H5I_INVALID_HID;  // closed already (e.g. with its file)
    return;
  }
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  // Named before closing: a file whose close failed (a write error, a full disk) may be half torn
  // down, and HDF5 1.10's H5Fget_name then reads freed memory.
  const std::string label = describe(id);
  checked([&] { return close_id(id); }, [&] { return "closing " + label; });
}

void Handle::reset() noexcept {
  if (valid()) close_id(id_);
  id_ = H5I_INVALID_HID;
}

// --------------------------------------------------------------------------------------- Object

std::string Object::name() const {
  const hid_t object = id();
  const ssize_t length = checked([&] { return H5Iget_name(object, nullptr, 0); },
                                 [&] { return std::string("H5Iget_name of an invalid object"); });
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  checked([&] { return H5Iget_name(object, text.data(), text.size()); },
          [&] { return "H5Iget_name " + describe(object); });
  text.resize(static_cast<std::size_t>(length));
  return text;
}

void Object::write_string_attr(std::string_view name, std::string_view value) {
  const std::string text(value);  // NUL-terminated for HDF5
  const char* pointer = text.c_str();
  Handle type = vlen_utf8_type();
  Handle space = scalar_space();
  write_attribute(id(), name, type.id(), type.id(), space.id(), &pointer);
}

void Object::set_attr(std::string_view name, const std::string& value) {
  write_string_attr(name, value);
}
void Object::set_attr(std::string_view name, std::string_view value) {
  write_string_attr(name, value);
}
void Object::set_attr(std::string_view name, const char* value) {
  write_string_attr(name, value != nullptr ? std::string_view(value) : std::string_view());
}

void Object::set_attr(std::string_view name, std::int64_t value) {
  Handle space = scalar_space();
  write_attribute(id(), name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.id(), &value);
}

void Object::set_attr(std::string_view name, std::uint64_t value) {
  Handle space = scalar_space();
  write_attribute(id(), name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.id(), &value);
}

void Object::set_attr(std::string_view name, double value) {
  Handle space = scalar_space();
  write_attribute(id(), name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.id(), &value);
}

void Object::set_attr(std::string_view name, int value) {
  set_attr(name, static_cast<std::int64_t>(value));
}

void Object::set_attr(std::string_view name, bool value) {
  const std::uint8_t byte = value ? 1 : 0;
  Handle space = scalar_space();
  write_attribute(id(), name, H5T_STD_U8LE, H5T_NATIVE_UINT8, space.id(), &byte);
}

void Object::set_attr(std::string_view name, const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& value : values) pointers.push_back(value.c_str());
  Handle type = vlen_utf8_type();
  Handle space = space_1d(values.size(), values.size());
  write_attribute(id(), name, type.id(), type.id(), space.id(), pointers.empty() ? nullptr : pointers.data());
}

void Object::set_attr(std::string_view name, const std::vector<double>& values) {
  write_numeric_attribute(id(), name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values);
}

void Object::set_attr(std::string_view name, const std::vector<std::int64_t>& values) {
  write_numeric_attribute(id(), name, H5T_STD_I64LE, H5T_NATIVE_INT64, values);
}

bool Object::has_attr(std::string_view name_view) const {
  const std::string name(name_view);
  return checked([&] { return H5Aexists(id(), name.c_str()); },
                 [&] { return "H5Aexists " + attribute_label(id(), name); }) > 0;
}

std::vector<std::string> Object::attr_names() const {
  std::vector<std::string> names;
  hsize_t position = 0;
  checked([&] { return H5Aiterate2(id(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name, &names); },
          [&] { return "H5Aiterate2 over the attributes of " + describe(id()); });
  return names;
}

std::string Object::attr_string(std::string_view name) const {
  std::vector<std::string> values = read_string_attribute(id(), name);
  if (values.size() != 1) {
    throw Error("attribute " + quoted(name) + " of " + describe(id()) + " has " + std::to_string(values.size()) +
                " strings, expected 1");
  }
  return std::move(values.front());
}

std::int64_t Object::attr_int(std::string_view name) const {
  return read_scalar_attribute<std::int64_t>(id(), name, H5T_NATIVE_INT64);
}

std::uint64_t Object::attr_uint(std::string_view name) const {
  return read_scalar_attribute<std::uint64_t>(id(), name, H5T_NATIVE_UINT64);
}

double Object::attr_double(std::string_view name) const {
  return read_scalar_attribute<double>(id(), name, H5T_NATIVE_DOUBLE);
}

std::vector<std::string> Object::attr_strings(std::string_view name) const {
  return read_string_attribute(id(), name);
}

std::vector<double> Object::attr_doubles(std::string_view name) const {
  return read_numeric_attribute<double>(id(), name, H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> Object::attr_ints(std::string_view name) const {
  return read_numeric_attribute<std::int64_t>(id(), name, H5T_NATIVE_INT64);
}

// -------------------------------------------------------------------------------------- Dataset

std::size_t Dataset::size() const {
  Handle space = dataset_space(id());
  return point_count(space.id());
}

bool Dataset::has_field(std::string_view field) const {
  Handle type = dataset_type(id());
  return type_class(type.id()) == H5T_COMPOUND && H5Tget_member_index(type.id(), std::string(field).c_str()) >= 0;
}

// ---------------------------------------------------------------------------------------- Group

Group Group::create_group(std::string_view path_view) {
  const std::string path(path_view);
  Handle lcpl = intermediate_groups_plist();
  return Group(Handle(checked([&] { return H5Gcreate2(id(), path.c_str(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT); },
                              [&] { return "H5Gcreate2 group " + quoted(path) + " in " + describe(id()); })));
}

Group Group::open_group(std::string_view path_view) const {
  const std::string path(path_view);
  return Group(Handle(checked([&] { return H5Gopen2(id(), path.c_str(), H5P_DEFAULT); },
                              [&] { return "H5Gopen2 group " + quoted(path) + " in " + describe(id()); })));
}

Dataset Group::open_dataset(std::string_view path) const {
  return Dataset(open_dataset_handle(id(), std::string(path)));
}

bool Group::exists(std::string_view path) const {
  const bool absolute = path.starts_with('/');
  std::string prefix = absolute ? "/" : "";
  bool checked_any = false;
  std::size_t begin = 0;
  while (begin < path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(begin, end - begin);
    begin = end + 1;
    if (segment.empty() || segment == ".") continue;
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    prefix += segment;
    // Only the first lookup's failure is an error (e.g. an invalid group); a later one means a
    // parent on the path is not a group, so the path cannot exist.
    silence_hdf5_printing();
    const htri_t found = H5Lexists(id(), prefix.c_str(), H5P_DEFAULT);
    if (found < 0 && !checked_any) {
      throw_hdf5_error([&] { return "H5Lexists " + quoted(prefix) + " in " + describe(id()); });
    }
    if (found <= 0) return false;
    checked_any = true;
  }
  return checked_any || absolute;  // "/" is the root group itself
}

// ----------------------------------------------------------------------------------------- File

File::File(Handle handle, std::string path, std::string partial_path, bool rename_on_close)
    : Group(std::move(handle)),
      path_(std::move(path)),
      partial_path_(std::move(partial_path)),
      rename_on_close_(rename_on_close) {}

File::File(File&& other) noexcept
    : Group(std::move(other)),
      path_(std::move(other.path_)),
      partial_path_(std::move(other.partial_path_)),
      rename_on_close_(std::exchange(other.rename_on_close_, false)) {}

File& File::operator=(File&& other) {
  if (this != &other) {
    close();
    Group::operator=(std::move(other));
    path_ = std::move(other.path_);
    partial_path_ = std::move(other.partial_path_);
    rename_on_close_ = std::exchange(other.rename_on_close_, false);
  }
  return *this;
}

File::~File() {
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope::h5: closing '%s' failed: %s\n", path_.c_str(), e.what());
  }
}

File File::create(const std::string& path) {
  std::string partial = path + ".partial";
  // Default (earliest) library-version bounds: superblock version 0, which has no
  // file-consistency flags, so readers can open the .partial file after a crash.
  Handle fapl = create_plist(H5P_FILE_ACCESS, "file-access list");
  checked([&] { return H5Pset_fclose_degree(fapl.id(), H5F_CLOSE_STRONG); },
          [] { return std::string("H5Pset_fclose_degree"); });
  Handle file(checked([&] { return H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()); },
                      [&] { return "H5Fcreate " + quoted(partial); }));
  return File(std::move(file), path, std::move(partial), true);
}

File File::open(const std::string& path) {
  Handle file(checked([&] { return H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); },
                      [&] { return "H5Fopen " + quoted(path) + " read-only"; }));
  return File(std::move(file), path, std::string(), false);
}

File File::open_rw(const std::string& path) {
  Handle file(checked([&] { return H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT); },
                      [&] { return "H5Fopen " + quoted(path) + " read-write"; }));
  return File(std::move(file), path, std::string(), false);
}

void File::flush() {
  checked([&] { return H5Fflush(id(), H5F_SCOPE_GLOBAL); }, [&] { return "H5Fflush " + quoted(path_); });
}

void File::close() {
  const bool rename = std::exchange(rename_on_close_, false);  // at most once, and never after a failure
  if (handle().valid()) {
    std::exception_ptr failure;
    try {
      flush();
    } catch (...) {
      failure = std::current_exception();
    }
    try {
      handle().close();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    if (failure) std::rethrow_exception(failure);
  }
  if (rename && std::rename(partial_path_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    throw Error("renaming " + quoted(partial_path_) + " to " + quoted(path_) + ": " + std::strerror(error));
  }
}

void File::close_partial() {
  rename_on_close_ = false;
  close();
}

// ------------------------------------------------------------------------------- CompoundTypeBase

CompoundTypeBase::CompoundTypeBase(std::size_t size)
    : type_(checked([&] { return H5Tcreate(H5T_COMPOUND, size); },
                    [&] { return "H5Tcreate compound of " + std::to_string(size) + " bytes"; })),
      size_(size) {}

void CompoundTypeBase::insert(const char* name, std::size_t offset, hid_t type) {
  checked([&] { return H5Tinsert(type_.id(), name, offset, type); },
          [&] { return "H5Tinsert member " + quoted(name) + " at offset " + std::to_string(offset); });
}

void CompoundTypeBase::insert_string(const char* name, std::size_t offset, std::size_t bytes) {
  Handle type = string_type(bytes, H5T_CSET_ASCII, H5T_STR_NULLPAD);
  insert(name, offset, type.id());  // H5Tinsert copies the member type
}

// ------------------------------------------------------------------------------------ TableBase

TableBase TableBase::create(Group& parent, std::string_view name_view, hid_t memtype, std::size_t chunk_rows) {
  const std::string name(name_view);
  const auto where = [&] { return "table " + quoted(name) + " in " + describe(parent.id()); };
  if (chunk_rows == 0) throw Error("creating " + where() + ": chunk_rows must be positive");
  Handle mem_type = copy_type(memtype);
  Handle file_type = copy_type(memtype);
  checked([&] { return H5Tpack(file_type.id()); }, [&] { return "H5Tpack for " + where(); });

  Handle space = space_1d(0, H5S_UNLIMITED);
  Handle dcpl = create_plist(H5P_DATASET_CREATE, "dataset-create list");
  const hsize_t chunk = chunk_rows;
  checked([&] { return H5Pset_chunk(dcpl.id(), 1, &chunk); }, [&] { return "H5Pset_chunk for " + where(); });
  checked([&] { return H5Pset_shuffle(dcpl.id()); }, [&] { return "H5Pset_shuffle for " + where(); });
  checked([&] { return H5Pset_deflate(dcpl.id(), 4); }, [&] { return "H5Pset_deflate for " + where(); });
  Handle lcpl = intermediate_groups_plist();
  Handle dataset(checked(
      [&] {
        return H5Dcreate2(parent.id(), name.c_str(), file_type.id(), space.id(), lcpl.id(), dcpl.id(), H5P_DEFAULT);
      },
      [&] { return "H5Dcreate2 " + where(); }));
  return TableBase(std::move(dataset), std::move(mem_type));
}

TableBase TableBase::open(const Group& parent, std::string_view name, hid_t memtype) {
  Handle dataset = open_dataset_handle(parent.id(), std::string(name));
  const std::string label = "table " + describe(dataset.id());
  Handle file_type = dataset_type(dataset.id());
  if (type_class(file_type.id()) != H5T_COMPOUND) throw Error(label + " is not a compound dataset");
  Handle space = dataset_space(dataset.id());
  const int rank = checked([&] { return H5Sget_simple_extent_ndims(space.id()); },
                           [&] { return "H5Sget_simple_extent_ndims " + label; });
  if (rank != 1) throw Error(label + " has rank " + std::to_string(rank) + ", expected 1");

  // HDF5 would silently leave a memory field that the file lacks untouched: refuse instead.
  const int members = checked([&] { return H5Tget_nmembers(memtype); }, [] { return std::string("H5Tget_nmembers"); });
  for (int i = 0; i < members; ++i) {
    char* member = H5Tget_member_name(memtype, static_cast<unsigned>(i));
    if (member == nullptr) throw_hdf5_error([&] { return "H5Tget_member_name " + std::to_string(i); });
    const std::string field(member);
    H5free_memory(member);
    if (H5Tget_member_index(file_type.id(), field.c_str()) < 0) throw Error(label + " has no field " + quoted(field));
  }
  return TableBase(std::move(dataset), copy_type(memtype));
}

void TableBase::append_rows(const void* rows, std::size_t count) {
  if (count == 0) return;
  const hsize_t start = size();
  const hsize_t added = count;
  const hsize_t new_size = start + added;
  checked([&] { return H5Dset_extent(id(), &new_size); }, [&] { return "H5Dset_extent " + describe(id()); });
  try {
    Handle file_space = dataset_space(id());
    checked([&] { return H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, &start, nullptr, &added, nullptr); },
            [&] { return "H5Sselect_hyperslab " + describe(id()); });
    Handle mem_space = space_1d(added, added);
    checked([&] { return H5Dwrite(id(), memtype_.id(), mem_space.id(), file_space.id(), H5P_DEFAULT, rows); },
            [&] { return "H5Dwrite " + std::to_string(count) + " rows to " + describe(id()); });
  } catch (...) {
    H5Dset_extent(id(), &start);  // best effort: do not leave unwritten rows behind
    throw;
  }
}

void TableBase::read_rows(void* rows, std::size_t count) const {
  const std::size_t rows_now = size();
  if (count != rows_now) {
    throw Error("reading " + describe(id()) + ": buffer for " + std::to_string(count) + " rows, table has " +
                std::to_string(rows_now));
  }
  if (count == 0) return;
  checked([&] { return H5Dread(id(), memtype_.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows); },
          [&] { return "H5Dread " + describe(id()); });
}

// ------------------------------------------------------------------------------- 1-D datasets

void write_vector(Group& parent, std::string_view name, const std::vector<double>& values) {
  write_1d(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), values.size());
}

void write_vector(Group& parent, std::string_view name, const std::vector<std::int64_t>& values) {
  write_1d(parent, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(), values.size());
}

// Fixed-length (the longest string's bytes, NUL-padded) rather than variable-length: a
// variable-length string lives in the file's global heap, and reading a damaged global heap is
// where HDF5 1.10 itself crashes; a fixed-length dataset is read as plain bytes.
void write_strings(Group& parent, std::string_view name, const std::vector<std::string>& values) {
  std::size_t width = 1;
  for (const std::string& value : values) width = std::max(width, value.size());
  std::string packed(values.size() * width, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) packed.replace(i * width, values[i].size(), values[i]);
  Handle type = string_type(width, H5T_CSET_UTF8, H5T_STR_NULLPAD);
  write_1d(parent, name, type.id(), type.id(), packed.data(), values.size());
}

std::vector<double> read_doubles(const Group& parent, std::string_view name) {
  return read_1d<double>(parent, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> read_ints(const Group& parent, std::string_view name) {
  return read_1d<std::int64_t>(parent, name, H5T_NATIVE_INT64);
}

std::vector<std::string> read_strings(const Group& parent, std::string_view name) {
  Handle dataset = open_dataset_handle(parent.id(), std::string(name));
  const std::string label = "dataset " + describe(dataset.id());
  Handle type = dataset_type(dataset.id());
  if (type_class(type.id()) != H5T_STRING) throw Error(label + " is not a string dataset");
  Handle space = dataset_space(dataset.id());
  return read_string_elements(type.id(), point_count(space.id()), label, [&](hid_t mem_type, void* buffer) {
    checked([&] { return H5Dread(dataset.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer); },
            [&] { return "H5Dread " + label; });
  });
}

}  // namespace commscope::h5
