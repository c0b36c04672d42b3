#pragma once
// The trainer's binary files (llm.c token shards and models, training checkpoints): opening,
// exact reads and writes through NAME.partial, every failure one line naming the file, thrown as
// the caller's exception type (DataError, CheckpointError).

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

namespace commscope::trainer::binary_file {

template <class Error>
[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

inline std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Opens a regular file for reading and returns it with its size; throws Error for a missing
// file, a directory, or a file that cannot be opened or sized.
template <class Error>
File open_for_reading(const std::string& path, std::uint64_t& size) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) fail<Error>(path, "no such file");
  if (std::filesystem::is_directory(status)) fail<Error>(path, "is a directory, not a file");
  if (!std::filesystem::is_regular_file(status)) fail<Error>(path, "is not a regular file");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail<Error>(path, "cannot open: " + errno_text(errno));
  size = std::filesystem::file_size(path, ec);
  if (ec) fail<Error>(path, "cannot read its size: " + ec.message());
  return f;
}

template <class Error>
void read_exactly(std::FILE* f, void* out, std::size_t bytes, const std::string& path) {
  if (bytes == 0) return;
  if (std::fread(out, 1, bytes, f) != bytes)
    fail<Error>(path,
                std::ferror(f) ? "read error: " + errno_text(errno) : "file ended early (truncated while reading?)");
}

// Writes through PATH.partial and renames it over PATH when everything is on disk.
template <class Error, class Body>
void write_atomically(const std::string& path, Body&& body) {
  const std::string partial = path + ".partial";
  File f(std::fopen(partial.c_str(), "wb"));
  if (!f) fail<Error>(path, "cannot create " + partial + ": " + errno_text(errno));
  auto write = [&](const void* data, std::size_t bytes) {
    if (bytes != 0 && std::fwrite(data, 1, bytes, f.get()) != bytes) {
      const int err = errno;
      f.reset();
      std::remove(partial.c_str());
      fail<Error>(path, "write error: " + errno_text(err));
    }
  };
  body(write);
  const bool flushed = std::fflush(f.get()) == 0;
  int err = errno;
  const bool closed = std::fclose(f.release()) == 0;
  if (flushed && !closed) err = errno;
  if (!flushed || !closed) {
    std::remove(partial.c_str());
    fail<Error>(path, "write error: " + errno_text(err));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(partial.c_str());
    fail<Error>(path, "cannot rename " + partial + " to it: " + errno_text(err));
  }
}

}  // namespace commscope::trainer::binary_file
