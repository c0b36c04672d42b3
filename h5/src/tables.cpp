// commscope::h5: datasets, compound types and tables (TableBase), and 1-D datasets of numbers and
// strings, on the checked wrappers of hdf5_calls.hpp.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/h5/h5.hpp"
#include "hdf5_calls.hpp"

namespace commscope::h5 {

using namespace detail;

// -------------------------------------------------------------------------------------- Dataset

std::size_t Dataset::size() const {
  Handle space = dataset_space(id());
  return point_count(space.id());
}

bool Dataset::has_field(std::string_view field) const {
  Handle type = dataset_type(id());
  return type_class(type.id()) == H5T_COMPOUND && H5Tget_member_index(type.id(), std::string(field).c_str()) >= 0;
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

void TableBase::replace_rows(const void* rows, std::size_t count) {
  const hsize_t n = count;
  checked([&] { return H5Dset_extent(id(), &n); }, [&] { return "H5Dset_extent " + describe(id()); });
  if (count == 0) return;
  Handle mem_space = space_1d(n, n);
  checked([&] { return H5Dwrite(id(), memtype_.id(), mem_space.id(), H5S_ALL, H5P_DEFAULT, rows); },
          [&] { return "H5Dwrite " + std::to_string(count) + " rows to " + describe(id()); });
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
