// commscope::h5: errors, handles, attributes, groups and files, on the checked wrappers of
// hdf5_calls.hpp (datasets and tables: tables.cpp).
#include "commscope/h5/h5.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "hdf5_calls.hpp"

namespace commscope::h5 {
namespace {

// HDF5 1.10 closes the files still open at exit (H5_term_library, registered with atexit), and
// crashes in it on a file whose close failed after a write error (a full disk): every file of ours
// is closed by its owner, so the library's exit handler is not registered. H5dont_atexit must run
// before any other HDF5 call, hence a static initializer.
[[maybe_unused]] const bool kNoExitHandler = H5dont_atexit() >= 0;

}  // namespace

using namespace detail;

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

void Group::remove(std::string_view name_view) {
  const std::string name(name_view);
  checked([&] { return H5Ldelete(id(), name.c_str(), H5P_DEFAULT); },
          [&] { return "H5Ldelete " + quoted(name) + " in " + describe(id()); });
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

namespace {

// Whether another open file description holds a lock on `path` that keeps out a reader's shared
// lock (or, `exclusive`, a writer's): HDF5's own lock (flock) of a file open for writing.
bool locked_by_another(const std::string& path, bool exclusive) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // and with it the probe's own lock
  return locked;
}

// H5Fopen, waiting while another process's lock keeps the file out (see File::open).
Handle open_waiting(const std::string& path, unsigned flags, std::chrono::milliseconds wait) {
  const bool rw = flags == H5F_ACC_RDWR;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (bool again = true;;) {
    try {
      return Handle(checked([&] { return H5Fopen(path.c_str(), flags, H5P_DEFAULT); },
                            [&] { return "H5Fopen " + quoted(path) + (rw ? " read-write" : " read-only"); }));
    } catch (const Error&) {
      // No lock now: a writer may have let go since H5Fopen failed on its lock (a rank exiting
      // just then); once more before the failure stands.
      if (!locked_by_another(path, rw)) {
        if (!std::exchange(again, false)) throw;
        continue;
      }
      again = true;
      if (std::chrono::steady_clock::now() >= deadline) {
        char waited[32];
        std::snprintf(waited, sizeof waited, "%.3g", static_cast<double>(wait.count()) / 1000);
        throw FileLocked(quoted(path) + " is open for writing in another process (a run still writing it?): waited " +
                         waited + " s for it to let go");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

}  // namespace

File File::open(const std::string& path, std::chrono::milliseconds wait_for_writer) {
  return File(open_waiting(path, H5F_ACC_RDONLY, wait_for_writer), path, std::string(), false);
}

File File::open_rw(const std::string& path, std::chrono::milliseconds wait_for_writer) {
  return File(open_waiting(path, H5F_ACC_RDWR, wait_for_writer), path, std::string(), false);
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

}  // namespace commscope::h5
