// A thin RAII layer over the HDF5 C API for commscope's result files.
//
// Every HDF5 C call is made (and checked) in h5.cpp: a failure throws h5::Error carrying what
// failed (the call and the file:/object path) and HDF5's own error stack. Handles close themselves.
// A plain struct maps to an HDF5 compound type (CompoundType<T>), and a Table<T> is an
// appendable, chunked, compressed 1-D dataset of such structs.
//
// Files are written crash-safely: File::create writes to `path + ".partial"` and close()
// renames it to `path` atomically, so a file under its final name is always complete. After
// flush() the .partial file is a valid HDF5 file even if the process is then killed.
//
// Not thread-safe: use one File (and everything opened from it) from one thread at a time.
#pragma once

#include <hdf5.h>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace commscope::h5 {

// Any failure of this library, in one line. what() = what failed (the call and the
// file:/object path), then, when HDF5 reported the failure, ": " and failure_cause() of HDF5's
// error stack; the whole stack (often ten entries) stays in hdf5_stack().
class Error : public std::runtime_error {
 public:
  // A failure HDF5 did not report (wrong attribute kind, bad argument, failed rename, ...).
  explicit Error(const std::string& what);
  // A failed HDF5 call; `hdf5_stack` = the descriptions on HDF5's error stack, outermost first.
  Error(const std::string& what, std::vector<std::string> hdf5_stack);

  const std::vector<std::string>& hdf5_stack() const noexcept { return *stack_; }

 private:
  std::shared_ptr<const std::vector<std::string>> stack_;  // shared: exceptions copy without throwing
};

// A file another process keeps open for writing (File::open's wait ran out): not a damaged file.
class FileLocked : public Error {
 public:
  using Error::Error;
};

// The cause of a failed HDF5 call from its error stack (outermost first), short: the system's
// error message where an entry carries one ("No such file or directory", "No space left on
// device"), else the innermost entry ("can't locate attribute: 'x'", "truncated file: eof = 100,
// ..."), else "HDF5 gave no reason".
std::string failure_cause(const std::vector<std::string>& hdf5_stack);

// Owns one HDF5 identifier and closes it (H5Fclose, H5Gclose, H5Dclose, ... chosen by H5Iget_type).
// Move-only. Never wrap the predefined types (H5T_NATIVE_INT, ...): they must not be closed.
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(hid_t id) noexcept : id_(id) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t id() const noexcept { return id_; }
  // True while the identifier is open. False after close(), after a move, and after HDF5 closed
  // it with its file (File::create files close every object in them).
  bool valid() const noexcept;
  // Close now; throws Error if HDF5 fails. No-op when not valid().
  void close();
  // Give up ownership without closing.
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  void reset() noexcept;  // close(), ignoring errors (for the destructor and assignment)

  hid_t id_ = H5I_INVALID_HID;
};

// Something that carries attributes: a File (its root group), a Group or a Dataset.
class Object {
 public:
  Object() = default;  // an empty object: valid() is false
  explicit Object(Handle handle) noexcept : handle_(std::move(handle)) {}

  hid_t id() const noexcept { return handle_.id(); }
  bool valid() const noexcept { return handle_.valid(); }
  // The object's path inside its file ("/", "/runs/0", ...).
  std::string name() const;

  // --- attributes. set_attr replaces an existing attribute of the same name (delete, then create).
  // Strings are stored as variable-length UTF-8 (h5py reads `str`); a string ends at its first NUL.
  void set_attr(std::string_view name, const std::string& value);
  void set_attr(std::string_view name, std::string_view value);
  void set_attr(std::string_view name, const char* value);  // so that literals do not bind to bool
  void set_attr(std::string_view name, std::int64_t value);
  void set_attr(std::string_view name, std::uint64_t value);
  void set_attr(std::string_view name, double value);
  void set_attr(std::string_view name, int value);   // stored as int64
  void set_attr(std::string_view name, bool value);  // stored as uint8 (0 or 1)
  // Any other integer type (unsigned, long long, short, ...): stored as int64 or uint64 by signedness.
  template <std::integral I>
  void set_attr(std::string_view name, I value) {
    if constexpr (std::is_signed_v<I>) {
      set_attr(name, static_cast<std::int64_t>(value));
    } else {
      set_attr(name, static_cast<std::uint64_t>(value));
    }
  }
  void set_attr(std::string_view name, const std::vector<std::string>& values);   // 1-D, vlen UTF-8
  void set_attr(std::string_view name, const std::vector<double>& values);        // 1-D float64
  void set_attr(std::string_view name, const std::vector<std::int64_t>& values);  // 1-D int64

  bool has_attr(std::string_view name) const;
  // The names of this object's attributes, in name order (HDF5's name index, byte-wise ascending).
  std::vector<std::string> attr_names() const;
  // Readers throw Error naming the attribute when it is missing or of the wrong kind. Numbers are
  // converted by HDF5 (H5Aread into the native type; out-of-range values saturate). The scalar
  // readers need exactly one element; strings may be variable- or fixed-length.
  std::string attr_string(std::string_view name) const;
  std::int64_t attr_int(std::string_view name) const;
  std::uint64_t attr_uint(std::string_view name) const;
  double attr_double(std::string_view name) const;
  bool attr_bool(std::string_view name) const { return attr_int(name) != 0; }
  std::vector<std::string> attr_strings(std::string_view name) const;
  std::vector<double> attr_doubles(std::string_view name) const;
  std::vector<std::int64_t> attr_ints(std::string_view name) const;

 protected:
  Handle& handle() noexcept { return handle_; }

 private:
  void write_string_attr(std::string_view name, std::string_view value);

  Handle handle_;
};

// A dataset opened by name; see Table<T> and write_vector for creating one.
class Dataset : public Object {
 public:
  using Object::Object;
  // Number of elements (rows for a 1-D dataset).
  std::size_t size() const;
  // Whether the dataset's type is compound with a member `field` (a table's optional column).
  bool has_field(std::string_view field) const;
};

// A group. Paths are relative to this group, or absolute when they start with '/'.
class Group : public Object {
 public:
  using Object::Object;

  // Create a group; missing intermediate groups of a nested path ("a/b/c") are created too.
  Group create_group(std::string_view path);
  Group open_group(std::string_view path) const;
  Dataset open_dataset(std::string_view path) const;
  // True if every link along the path exists (checked segment by segment, so a missing parent
  // is false rather than an error). "" is false; "/" is true.
  bool exists(std::string_view path) const;
  // Unlinks `name` (H5Ldelete); its storage is freed once nothing holds it open.
  void remove(std::string_view name);
};

// An HDF5 file; as a Group it is the root group.
//
// Signal safety: to rename the .partial file from a SIGTERM handler, copy partial_path() and
// path() into static char buffers beforehand and call ::rename (async-signal-safe) in the handler
// -- ideally after a flush(), since data written after the last flush may not be on disk.
class File : public Group {
 public:
  // Create (truncating) `path + ".partial"`; close() renames it to `path`. Closing the file closes
  // every object still open in it (H5F_CLOSE_STRONG), so the renamed file is complete.
  static File create(const std::string& path);
  // Open an existing file read-only (H5F_ACC_RDONLY) or read-write (H5F_ACC_RDWR); no renaming.
  // HDF5 locks the files it opens (a writer exclusively) and refuses at once one that another
  // process holds the other way: such a file is waited for, up to `wait_for_writer`, then refused
  // with that reason (a run's file that mpirun's stop published while the rank still exits).
  static constexpr std::chrono::milliseconds kWaitForWriter{15000};
  static File open(const std::string& path, std::chrono::milliseconds wait_for_writer = kWaitForWriter);
  static File open_rw(const std::string& path, std::chrono::milliseconds wait_for_writer = kWaitForWriter);

  File(File&& other) noexcept;
  File& operator=(File&& other);  // closes (and renames) the current file first
  // Calls close(); errors are written to stderr, never thrown.
  ~File();

  // Write everything to disk (H5Fflush, global scope). Afterwards the file on disk is readable
  // (h5dump, h5py) even if the process is killed before close().
  void flush();
  // Flush, close and, for File::create, rename the .partial file to path(). Idempotent. If
  // flushing or closing fails, throws and leaves the .partial file where it is.
  void close();
  // Flush and close like close(), but leave a File::create file under partial_path(): for a
  // writer that gives up on an incomplete file. Idempotent; after close() it does nothing.
  void close_partial();

  // The final path (as given to create/open).
  const std::string& path() const noexcept { return path_; }
  // Where the file is written until close(): path() + ".partial"; empty for open/open_rw.
  const std::string& partial_path() const noexcept { return partial_path_; }

 private:
  File(Handle handle, std::string path, std::string partial_path, bool rename_on_close);

  std::string path_;
  std::string partial_path_;
  bool rename_on_close_ = false;
};

// Untyped core of CompoundType<T>: an HDF5 compound type of a given byte size.
class CompoundTypeBase {
 public:
  explicit CompoundTypeBase(std::size_t size);

  hid_t id() const noexcept { return type_.id(); }
  std::size_t size() const noexcept { return size_; }

  // Add a member of HDF5 type `type` (not taken over: the caller keeps ownership) at `offset`.
  void insert(const char* name, std::size_t offset, hid_t type);
  // Add a fixed-length string member of `bytes` bytes, padded with NULs (not necessarily
  // NUL-terminated: a string may use all `bytes`). h5py reads it as bytes without trailing NULs.
  void insert_string(const char* name, std::size_t offset, std::size_t bytes);

 private:
  Handle type_;
  std::size_t size_;
};

namespace detail {

template <class>
inline constexpr bool kDependentFalse = false;

// Byte offset of a data member, measured on a value-initialised T.
template <class T, class M>
std::size_t member_offset(M T::*member) {
  const T object{};
  const auto* base = reinterpret_cast<const unsigned char*>(std::addressof(object));
  const auto* field = reinterpret_cast<const unsigned char*>(std::addressof(object.*member));
  return static_cast<std::size_t>(field - base);
}

// The HDF5 native type of an arithmetic member (bool as uint8; an enum as its underlying type).
template <class M>
hid_t native_type() {
  if constexpr (std::is_enum_v<M>) {
    return native_type<std::underlying_type_t<M>>();
  } else if constexpr (std::is_same_v<M, bool>) {
    static_assert(sizeof(bool) == 1, "bool members are stored as uint8");
    return H5T_NATIVE_UINT8;
  } else if constexpr (std::is_integral_v<M> && sizeof(M) == 1) {
    return std::is_signed_v<M> ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8;
  } else if constexpr (std::is_integral_v<M> && sizeof(M) == 2) {
    return std::is_signed_v<M> ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16;
  } else if constexpr (std::is_integral_v<M> && sizeof(M) == 4) {
    return std::is_signed_v<M> ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32;
  } else if constexpr (std::is_integral_v<M> && sizeof(M) == 8) {
    return std::is_signed_v<M> ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
  } else if constexpr (std::is_same_v<M, float>) {
    return H5T_NATIVE_FLOAT;
  } else if constexpr (std::is_same_v<M, double>) {
    return H5T_NATIVE_DOUBLE;
  } else {
    static_assert(kDependentFalse<M>, "CompoundType: members must be integers, enums, float, double, bool or char[N]");
  }
}

}  // namespace detail

// Maps a plain struct T to an HDF5 compound type, one add() per member that goes in the file:
//   auto type = CompoundType<Row>{}.add("rank", &Row::rank).add("host", &Row::host);
// Members: int8..int64, uint8..uint64, enums (stored as their underlying integer), float, double,
// bool (stored as uint8), and char[N] (fixed-length string of N bytes; see insert_string).
// Move-only.
template <class T>
class CompoundType : public CompoundTypeBase {
  static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>,
                "CompoundType<T>: T must be a trivially copyable, standard-layout struct");
  static_assert(std::is_default_constructible_v<T>, "CompoundType<T>: T must be default-constructible");

 public:
  CompoundType() : CompoundTypeBase(sizeof(T)) {}

  template <class M>
  CompoundType& add(const char* name, M T::*member) & {
    if constexpr (std::is_array_v<M>) {
      static_assert(std::rank_v<M> == 1 && std::is_same_v<std::remove_extent_t<M>, char>,
                    "CompoundType: the only array members supported are char[N] strings");
      insert_string(name, detail::member_offset(member), std::extent_v<M>);
    } else {
      insert(name, detail::member_offset(member), detail::native_type<M>());
    }
    return *this;
  }
  template <class M>
  CompoundType&& add(const char* name, M T::*member) && {
    return std::move(add(name, member));
  }
};

// Copy `value` into a char[N] member: truncated to N bytes, the rest filled with NULs.
template <std::size_t N>
void set_fixed(char (&field)[N], std::string_view value) {
  const std::size_t n = value.size() < N ? value.size() : N;
  std::memcpy(field, value.data(), n);
  std::memset(field + n, 0, N - n);
}
// The string in a char[N] member: up to the first NUL, or all N bytes.
template <std::size_t N>
std::string_view get_fixed(const char (&field)[N]) {
  const void* nul = std::memchr(field, '\0', N);
  return {field, nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - field) : N};
}

// Untyped core of Table<T>: a 1-D dataset of a compound type, read and written through a
// memory type (a copy of the CompoundType's) and untyped row buffers.
class TableBase : public Dataset {
 protected:
  TableBase(Handle dataset, Handle memtype) noexcept : Dataset(std::move(dataset)), memtype_(std::move(memtype)) {}

  // Chunked (chunk_rows rows), unlimited, shuffle + deflate level 4. The file type is the
  // memory type packed (no padding).
  static TableBase create(Group& parent, std::string_view name, hid_t memtype, std::size_t chunk_rows);
  // Every member of `memtype` must exist (by name) in the dataset's compound type.
  static TableBase open(const Group& parent, std::string_view name, hid_t memtype);
  void append_rows(const void* rows, std::size_t count);
  // Sets the table to exactly these `count` rows (shrinking or growing it), written from row 0.
  void replace_rows(const void* rows, std::size_t count);
  // Reads exactly `count` rows (must equal size()) into `rows`.
  void read_rows(void* rows, std::size_t count) const;

 private:
  Handle memtype_;
};

// An appendable table of T rows: a 1-D, chunked, extendible, compressed dataset of
// CompoundType<T>. As an Object it carries attributes (units, description, ...).
template <class T>
class Table : public TableBase {
 public:
  static Table create(Group& parent, std::string_view name, const CompoundType<T>& type, std::size_t chunk_rows = 256) {
    return Table(TableBase::create(parent, name, type.id(), chunk_rows));
  }
  // Reads and writes convert through `type`: it may list a subset of the file's fields, in any
  // order (fields not in `type` are skipped; every field of `type` must be in the file).
  static Table open(const Group& parent, std::string_view name, const CompoundType<T>& type) {
    return Table(TableBase::open(parent, name, type.id()));
  }

  // Extend the table and write the rows at its end; zero rows is a no-op.
  void append(std::span<const T> rows) { append_rows(rows.data(), rows.size()); }
  void append(const T& row) { append_rows(&row, 1); }
  // The table becomes `rows` (a file written step by step rewrites its totals in place).
  void replace(std::span<const T> rows) { replace_rows(rows.data(), rows.size()); }

  std::vector<T> read_all() const {
    std::vector<T> rows(size());
    read_rows(rows.data(), rows.size());
    return rows;
  }

 private:
  explicit Table(TableBase&& base) noexcept : TableBase(std::move(base)) {}
};

// Plain 1-D datasets (contiguous, float64 / int64). Writing fails if `name` exists. The readers
// accept any numeric dataset (converted by HDF5) and flatten it.
void write_vector(Group& parent, std::string_view name, const std::vector<double>& values);
void write_vector(Group& parent, std::string_view name, const std::vector<std::int64_t>& values);
std::vector<double> read_doubles(const Group& parent, std::string_view name);
std::vector<std::int64_t> read_ints(const Group& parent, std::string_view name);

// Checks before HDF5 sees a file to read, for clearer messages than HDF5's: "" when `path` is a
// readable regular file with the HDF5 signature, else the problem in a few words ("no such
// file", "is a directory, not WHAT", "an empty file: not an HDF5 file", "not an HDF5 file", ...).
// A missing `path` beside an existing `path`.partial (a writer stopped before its rename) says
// where what was written is.
std::string file_problem(const std::string& path, std::string_view what);
// Runs `read` (which reads `path`) in a forked child first, because HDF5 1.10 is not hardened
// against damaged files: most damage is reported as an error, but some crashes the library (a
// damaged global heap in H5HG_read, a damaged attribute table in H5A__close) or sends it into an
// endless loop (a global heap pointing at itself). Returns "" when `read` finished without an
// exception; else one line: the exception's text, or that the library crashed, or that it did not
// finish within read_time_limit_s(path) (the child is then killed). The caller must be
// single-threaded (the child inherits its memory as it is); the file is read once more, which
// costs milliseconds for results files.
std::string read_in_child(const std::string& path, const std::function<void()>& read);
// COMMSCOPE_READ_TIMEOUT seconds when set (std::invalid_argument when not a positive number),
// else 60 s plus 1 s for every 10 MB of `path` (a healthy read goes at hundreds of MB/s).
double read_time_limit_s(const std::string& path);

// `text` made safe for a one-line error message: strings read from a (possibly damaged) file may
// hold any bytes. Line breaks become spaces; other control bytes, bytes that are not valid UTF-8
// and the Unicode line separators (U+0085, U+2028, U+2029) become \xNN escapes.
std::string one_line(std::string_view text);
// True when the HDF5 signature is at offset 0, 512, 1024, 2048, ... (where HDF5 looks for it).
bool has_signature(const std::string& path);

// A plain 1-D dataset of fixed-length UTF-8 strings as wide as the longest, NUL-padded
// (contiguous; h5py: `f[name].asstr()[:]`).
// A string ends at its first NUL. Writing fails if `name` exists. The reader accepts any string
// dataset, variable- or fixed-length (padding dropped as for attributes), and flattens it.
void write_strings(Group& parent, std::string_view name, const std::vector<std::string>& values);
std::vector<std::string> read_strings(const Group& parent, std::string_view name);

}  // namespace commscope::h5
