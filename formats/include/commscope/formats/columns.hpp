// A table's columns written once: each column's name in the file, its member of the row struct
// (which gives its type), its unit and whether a reader needs it. The writer's HDF5 type, the
// reader's and the documentation's list all come from one Columns<Row>, so adding a column is a
// member of the row and one add() line beside the others.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commscope/h5/h5.hpp"

namespace commscope::formats {

// A file that does not hold what its format says (a table missing, claiming more rows than the
// file could hold). what() is one line without the file's name; the caller adds it.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether a reader refuses a table without the column (kRequired), or reads the row's default
// value for it (kOptional: a column added after files were written, or one no reader needs).
enum class Need { kRequired, kOptional };

template <class Row>
class Columns {
 public:
  struct Column {
    const char* name;
    const char* unit;  // "" for counts, indices and text
    Need need;
    std::function<void(h5::CompoundType<Row>&)> add_to;
  };

  template <class M>
  Columns& add(const char* name, M Row::*member, const char* unit = "", Need need = Need::kRequired) {
    columns_.push_back({name, unit, need, [name, member](h5::CompoundType<Row>& t) { t.add(name, member); }});
    return *this;
  }

  const std::vector<Column>& list() const { return columns_; }

  // Every column, in order: the type the writer creates the table with.
  h5::CompoundType<Row> all() const {
    h5::CompoundType<Row> t;
    for (const Column& c : columns_) c.add_to(t);
    return t;
  }
  // The type a reader reads `table` with: the required columns (a table without one fails to
  // open, naming it) and the optional ones the table has.
  h5::CompoundType<Row> in(const h5::Dataset& table) const {
    h5::CompoundType<Row> t;
    for (const Column& c : columns_)
      if (c.need == Need::kRequired || table.has_field(c.name)) c.add_to(t);
    return t;
  }

 private:
  std::vector<Column> columns_;
};

// Throws FormatError when table `name` claims more rows than a file of `file_bytes` could hold.
// A damaged dataspace can claim any number of rows: better refused than allocated. A packed row
// is 8 to ~190 bytes and deflate compresses at most ~1000:1, so a real file holds well under 8
// rows per byte.
void check_row_claim(const std::string& name, std::size_t rows, std::uintmax_t file_bytes);

// The rows of table `name` of `file`, read with `columns.in(table)`; file_bytes bounds the rows
// the table may claim (check_row_claim).
template <class Row>
std::vector<Row> read_rows(const h5::Group& file, const std::string& name, const Columns<Row>& columns,
                           std::uintmax_t file_bytes) {
  const h5::Dataset dataset = file.open_dataset(name);
  const auto table = h5::Table<Row>::open(file, name, columns.in(dataset));
  check_row_claim(name, table.size(), file_bytes);
  return table.read_all();
}

}  // namespace commscope::formats
