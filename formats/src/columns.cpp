#include "commscope/formats/columns.hpp"

namespace commscope::formats {

void check_row_claim(const std::string& name, std::size_t rows, std::uintmax_t file_bytes) {
  if (rows / 8 > file_bytes)
    throw FormatError("/" + name + " claims " + std::to_string(rows) + " rows, more than a file of " +
                      std::to_string(file_bytes) + " bytes holds: a damaged file?");
}

}  // namespace commscope::formats
