// pipeline/window_stage.cc: $setWindowFields. Documents are partitioned
// (partitionBy), ordered within each partition (sortBy), and each gets its
// output fields from a window of its partition: the accumulators of
// accumulators.h over `window: {documents: [lo, hi]}` (positions relative
// to the document; "unbounded", "current" or an integer) or `range: [lo,
// hi]` (sortBy values within lo..hi of the document's, optionally in a
// date `unit`), the whole partition when no window is given; and the
// order functions $rank, $denseRank, $documentNumber and $shift.
//
// Cost: a window over the whole partition is computed once per partition,
// [unbounded, current] incrementally; other windows accumulate their
// documents for each document (O(partition x window)). The stage holds
// its input (blocking, 100 MB).
#include <algorithm>
#include <map>

#include "pipeline/stage.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

enum class Fn { kAccumulator, kRank, kDenseRank, kDocumentNumber, kShift };

struct Bound {
  enum Kind { kUnbounded, kCurrent, kOffset } kind = kUnbounded;
  double offset = 0;  // documents: an integer; range: a number
};

struct OutputSpec {
  std::string field;
  Fn fn = Fn::kAccumulator;
  AccumulatorSpec acc;  // kAccumulator
  ExpressionPtr shift_output, shift_default;
  int64_t shift_by = 0;
  bool has_window = false;
  bool range = false;  // a range window (else documents)
  int64_t unit_ms = 0;  // range with a date unit
  Bound lo, hi;
};

StatusOr<Bound> ParseBound(const Element& e, bool range) {
  Bound b;
  if (e.type() == BsonType::kString && e.String() == "unbounded") return b;
  if (e.type() == BsonType::kString && e.String() == "current") {
    b.kind = Bound::kCurrent;
    return b;
  }
  int64_t n = 0;
  if (e.IsNumber() && (range || e.ExactInt64(&n))) {
    b.kind = Bound::kOffset;
    b.offset = e.NumberAsDouble();
    return b;
  }
  return StageFailed(9, std::string("Window bounds must be 'unbounded', 'current', or ") +
                                                   (range ? "a number" : "an integer") + ", found: " +
                                                   ValueToJson(e, JsonFormat::kShell));
}

StatusOr<int64_t> UnitMillis(std::string_view unit) {
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"millisecond", 1}, {"second", 1000}, {"minute", 60'000}, {"hour", 3'600'000},
      {"day", 86'400'000}, {"week", 7 * 86'400'000LL}};
  for (const auto& [name, ms] : kUnits) {
    if (unit == name) return ms;
  }
  if (unit == "month" || unit == "quarter" || unit == "year") {
    return Status(ErrorCode::kNotImplemented, "$setWindowFields range windows in " + std::string(unit) +
                                                  "s are not supported by rockdoc yet");
  }
  return StageFailed(9, "unknown time unit value: " + std::string(unit));
}

StatusOr<OutputSpec> ParseOutputField(std::string_view field, const Element& spec, VariableScope* scope) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(9, "The field '" + std::string(field) + "' must be an object");
  }
  OutputSpec out;
  out.field = std::string(field);
  Element fn, window;
  for (const Element& f : spec.Document()) {
    if (f.key() == "window") {
      window = f;
    } else if (fn.ok()) {
      return StageFailed(9, "Two functions in one $setWindowFields output field: '" +
                                std::string(fn.key()) + "' and '" + std::string(f.key()) + "'");
    } else {
      fn = f;
    }
  }
  if (!fn.ok()) return StageFailed(9, "Expected a window function in the output field '" + std::string(field) + "'");
  const std::string_view name = fn.key();
  if (name == "$rank" || name == "$denseRank" || name == "$documentNumber") {
    if (fn.type() != BsonType::kDocument || !fn.Document().empty()) {
      return StageFailed(5371603, std::string(name) + " must be specified with '{}' as the value");
    }
    out.fn = name == "$rank" ? Fn::kRank : name == "$denseRank" ? Fn::kDenseRank : Fn::kDocumentNumber;
    if (window.ok()) return StageFailed(5371601, "Rank style window functions take no other arguments");
    return out;
  }
  if (name == "$shift") {
    out.fn = Fn::kShift;
    if (fn.type() != BsonType::kDocument) return StageFailed(9, "$shift must be an object");
    Element output, by, fallback;
    for (const Element& f : fn.Document()) {
      if (f.key() == "output") {
        output = f;
      } else if (f.key() == "by") {
        by = f;
      } else if (f.key() == "default") {
        fallback = f;
      } else {
        return StageFailed(9, "Unknown argument in $shift: " + std::string(f.key()));
      }
    }
    if (!output.ok()) return StageFailed(9, "$shift requires an 'output' expression.");
    if (!by.ok() || !by.IsNumber() || !by.ExactInt64(&out.shift_by)) {
      return StageFailed(9, "$shift requires 'by' as an integer value.");
    }
    if (window.ok()) return StageFailed(9, "$shift does not accept a 'window' field");
    ROCKDOC_ASSIGN_OR_RETURN(out.shift_output, ParseExpression(output, scope));
    if (fallback.ok()) {
      ROCKDOC_ASSIGN_OR_RETURN(out.shift_default, ParseExpression(fallback, scope));
    }
    return out;
  }
  static const char* const kAccumulators[] = {"$sum", "$avg", "$min", "$max", "$count", "$first",
                                              "$last", "$push", "$addToSet", "$stdDevPop",
                                              "$stdDevSamp", "$mergeObjects"};
  if (std::find_if(std::begin(kAccumulators), std::end(kAccumulators),
                   [&](const char* a) { return name == a; }) == std::end(kAccumulators)) {
    static const char* const kKnown[] = {"$derivative", "$integral", "$expMovingAvg", "$covariancePop",
                                         "$covarianceSamp", "$locf", "$linearFill", "$topN", "$bottomN",
                                         "$top", "$bottom", "$firstN", "$lastN", "$maxN", "$minN",
                                         "$median", "$percentile"};
    for (const char* k : kKnown) {
      if (name == k) {
        return Status(ErrorCode::kNotImplemented,
                      "the window function " + std::string(name) + " is not supported by rockdoc yet");
      }
    }
    return StageFailed(5397900, "Unrecognized window function, " + std::string(name));
  }
  ROCKDOC_ASSIGN_OR_RETURN(out.acc, ParseAccumulator(field, fn, scope));
  if (window.ok()) {
    if (window.type() != BsonType::kDocument) return StageFailed(9, "'window' field must be an object");
    out.has_window = true;
    Element bounds, unit;
    for (const Element& f : window.Document()) {
      if (f.key() == "documents" || f.key() == "range") {
        if (bounds.ok()) return StageFailed(5339802, "Window bounds can specify either 'documents' or 'range', not both.");
        bounds = f;
        out.range = f.key() == "range";
      } else if (f.key() == "unit") {
        unit = f;
      } else {
        return StageFailed(5397901, "'window' field can only contain 'documents' as the only argument or "
                                    "'range' with an optional 'unit' field");
      }
    }
    if (!bounds.ok() || bounds.type() != BsonType::kArray) {
      return StageFailed(9, "Window bounds must be a 2-element array");
    }
    std::vector<Element> pair;
    for (const Element& b : bounds.Array()) pair.push_back(b);
    if (pair.size() != 2) return StageFailed(9, "Window bounds must be a 2-element array");
    ROCKDOC_ASSIGN_OR_RETURN(out.lo, ParseBound(pair[0], out.range));
    ROCKDOC_ASSIGN_OR_RETURN(out.hi, ParseBound(pair[1], out.range));
    if (unit.ok()) {
      if (!out.range) return StageFailed(5397903, "Window bounds can only specify 'unit' with range-based bounds.");
      if (unit.type() != BsonType::kString) return StageFailed(9, "'unit' must be a string");
      ROCKDOC_ASSIGN_OR_RETURN(out.unit_ms, UnitMillis(unit.String()));
    }
    auto position = [](const Bound& b) {
      return b.kind == Bound::kUnbounded ? 0 : b.kind == Bound::kCurrent ? 0.0 : b.offset;
    };
    if (out.lo.kind != Bound::kUnbounded && out.hi.kind != Bound::kUnbounded &&
        position(out.lo) > position(out.hi)) {
      return StageFailed(5339900, "Lower bound must not exceed upper bound");
    }
    if (out.hi.kind == Bound::kUnbounded && out.lo.kind == Bound::kUnbounded) out.has_window = false;
  }
  return out;
}

class SetWindowFieldsStage : public BlockingStage {
 public:
  SetWindowFieldsStage(ExpressionPtr partition_by, SortPattern sort_by, std::vector<OutputSpec> outputs,
                       const StageContext& ctx)
      : BlockingStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        partition_by_(std::move(partition_by)),
        sort_by_(std::move(sort_by)),
        outputs_(std::move(outputs)),
        policy_(SpillPolicy::Of(ctx.options)) {}

 private:
  struct Row {
    Value partition;
    std::vector<Value> sort_key;
    Document doc;
  };

  int CompareSort(const Row& a, const Row& b) const {
    return sort_by_.CompareKeys(a.sort_key, b.sort_key);
  }

  void AppendExecutionStats(BsonBuilder* out) const override { runs_.AppendExecutionStats(out); }

  static int64_t RowBytes(const Document& doc) { return static_cast<int64_t>(doc.size()) * 2 + 64; }

  // By partition, then by sortBy (stable: ties keep input order).
  void SortRows(std::vector<Row>* rows) const {
    std::stable_sort(rows->begin(), rows->end(), [&](const Row& a, const Row& b) {
      if (partition_by_ != nullptr) {
        const int c = CompareValues(a.partition.element(), b.partition.element());
        if (c != 0) return c < 0;
      }
      return !sort_by_.empty() && CompareSort(a, b) < 0;
    });
  }

  // A row as a spilled record: {p: partition, k: [sort key], d: document}.
  static Document Carrier(const Row& r) {
    BsonBuilder b;
    if (r.partition.ok()) {
      b.AppendElementAs("p", r.partition.element());
    } else {
      b.AppendNull("p");
    }
    b.OpenArray("k");
    for (const Value& v : r.sort_key) b.AppendElementAs("", v.element());
    b.Close();
    b.AppendDocument("d", r.doc.view());
    return std::move(b).Build();
  }
  // A carrier's keys alone (comparisons), or its whole row.
  Row KeysOf(DocumentView c) const {
    Row r;
    if (partition_by_ != nullptr) r.partition = Value::FromElement(c.Get("p"));
    for (const Element& k : c.Get("k").Array()) r.sort_key.push_back(Value::FromElement(k));
    return r;
  }
  Row FromCarrier(DocumentView c) const {
    Row r = KeysOf(c);
    r.doc = Document::AdoptValidated(std::string(c.Get("d").Document().bytes()));
    return r;
  }

  // Sorts the rows and writes them as one more run.
  Status SpillRows(std::vector<Row>* rows) {
    SortRows(rows);
    ROCKDOC_RETURN_IF_ERROR(runs_.Spill(policy_, [&](SpillWriter* w) -> Status {
      for (const Row& r : *rows) ROCKDOC_RETURN_IF_ERROR(w->Add(Carrier(r).bytes()));
      return Status::OK();
    }));
    rows->clear();
    rows->shrink_to_fit();
    return Status::OK();
  }

  // After spilling: the runs merged in (partition, sortBy) order, one
  // partition at a time in memory (MongoDB spills within a partition too;
  // rockdoc does not: one partition past the limit is ExceededMemoryLimit),
  // its results written to a run of their own that the output reads.
  Status BuildFromRuns() {
    ROCKDOC_RETURN_IF_ERROR(runs_.Start());
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> out, policy_.new_run());
    std::vector<Row> part;
    int64_t part_bytes = 0;
    std::vector<Document> results;
    auto flush = [&]() -> Status {
      results.clear();
      ROCKDOC_RETURN_IF_ERROR(Partition(part, 0, part.size(), &results));
      for (const Document& d : results) ROCKDOC_RETURN_IF_ERROR(out->Add(d.bytes()));
      part.clear();
      part_bytes = 0;
      return Status::OK();
    };
    const auto compare = [this](DocumentView a, DocumentView b) -> StatusOr<int> {
      const Row x = KeysOf(a), y = KeysOf(b);
      if (partition_by_ != nullptr) {
        const int c = CompareValues(x.partition.element(), y.partition.element());
        if (c != 0) return c;
      }
      return sort_by_.empty() ? 0 : CompareSort(x, y);
    };
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least(compare));
      if (run < 0) break;
      Row r = FromCarrier(runs_.head(run).view());
      ROCKDOC_RETURN_IF_ERROR(runs_.Advance(run));
      if (!part.empty() && partition_by_ != nullptr &&
          CompareValues(part.front().partition.element(), r.partition.element()) != 0) {
        ROCKDOC_RETURN_IF_ERROR(flush());
      }
      part_bytes += RowBytes(r.doc);
      if (part_bytes > policy_.memory_limit) {
        return Status(ErrorCode::kExceededMemoryLimit,
                      "$setWindowFields: one partition holds more than the memory limit of " +
                          std::to_string(policy_.memory_limit) +
                          " bytes; rockdoc spills between partitions, not within one");
      }
      part.push_back(std::move(r));
    }
    if (!part.empty()) ROCKDOC_RETURN_IF_ERROR(flush());
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> reader, out->Finish());
    set_spilled_results(MakeSpillSource(std::move(reader)));
    return Status::OK();
  }

  Status Build(std::vector<Document>* results) override {
    std::vector<Row> rows;
    int64_t bytes = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      Row r;
      if (partition_by_ != nullptr) {
        ROCKDOC_ASSIGN_OR_RETURN(r.partition, partition_by_->Evaluate(VariablesFor(*doc)));
        if (!r.partition.ok()) r.partition = NullValue();
      }
      std::vector<Element> key;
      ROCKDOC_RETURN_IF_ERROR(sort_by_.ExtractKey(doc->view(), &key));
      // A missing key part sorts as null.
      for (const Element& k : key) r.sort_key.push_back(k.ok() ? Value::FromElement(k) : NullValue());
      bytes += RowBytes(*doc);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$setWindowFields", policy_.allow_disk_use);
        ROCKDOC_RETURN_IF_ERROR(SpillRows(&rows));
        bytes = RowBytes(*doc);
      }
      r.doc = std::move(*doc);
      rows.push_back(std::move(r));
    }
    if (!runs_.empty()) {
      ROCKDOC_RETURN_IF_ERROR(SpillRows(&rows));
      return BuildFromRuns();
    }
    SortRows(&rows);
    size_t begin = 0;
    while (begin < rows.size()) {
      size_t end = begin + 1;
      while (end < rows.size() && (partition_by_ == nullptr ||
                                   CompareValues(rows[end].partition.element(), rows[begin].partition.element()) == 0)) {
        ++end;
      }
      ROCKDOC_RETURN_IF_ERROR(Partition(rows, begin, end, results));
      begin = end;
    }
    return Status::OK();
  }

  // The window of row i (positions [from, to) of the partition).
  std::pair<size_t, size_t> Window(const OutputSpec& o, const std::vector<Row>& rows, size_t begin,
                                   size_t end, size_t i) const {
    if (!o.range) {
      auto at = [&](const Bound& b, bool upper) -> int64_t {
        if (b.kind == Bound::kUnbounded) return upper ? static_cast<int64_t>(end) : static_cast<int64_t>(begin);
        const int64_t pos = static_cast<int64_t>(i) + (b.kind == Bound::kCurrent ? 0 : static_cast<int64_t>(b.offset));
        return upper ? pos + 1 : pos;
      };
      const int64_t from = std::max<int64_t>(at(o.lo, false), static_cast<int64_t>(begin));
      const int64_t to = std::min<int64_t>(at(o.hi, true), static_cast<int64_t>(end));
      return {static_cast<size_t>(from), static_cast<size_t>(std::max(from, to))};
    }
    // Range: sortBy values within [v + lo, v + hi].
    auto number = [&](const Value& v) -> double {
      if (!v.ok()) return 0;
      if (v.type() == BsonType::kDateTime) return static_cast<double>(v.element().DateTime());
      return v.element().NumberAsDouble();
    };
    const double v = number(rows[i].sort_key[0]);
    const double scale = o.unit_ms > 0 ? static_cast<double>(o.unit_ms) : 1.0;
    size_t from = begin, to = end;
    if (o.lo.kind != Bound::kUnbounded) {
      const double lo = v + (o.lo.kind == Bound::kCurrent ? 0 : o.lo.offset * scale);
      while (from < end && number(rows[from].sort_key[0]) < lo) ++from;
    }
    if (o.hi.kind != Bound::kUnbounded) {
      const double hi = v + (o.hi.kind == Bound::kCurrent ? 0 : o.hi.offset * scale);
      to = from;
      while (to < end && number(rows[to].sort_key[0]) <= hi) ++to;
    }
    return {from, std::max(from, to)};
  }

  Status Partition(const std::vector<Row>& rows, size_t begin, size_t end, std::vector<Document>* results) {
    const size_t n = end - begin;
    std::vector<std::vector<Value>> values(outputs_.size(), std::vector<Value>(n));
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const OutputSpec& o = outputs_[k];
      switch (o.fn) {
        case Fn::kDocumentNumber:
          for (size_t i = 0; i < n; ++i) values[k][i] = IntegerValue(static_cast<int64_t>(i + 1));
          break;
        case Fn::kRank:
        case Fn::kDenseRank: {
          int64_t rank = 0, dense = 0;
          for (size_t i = 0; i < n; ++i) {
            if (i == 0 || CompareSort(rows[begin + i - 1], rows[begin + i]) != 0) {
              rank = static_cast<int64_t>(i + 1);
              ++dense;
            }
            values[k][i] = IntegerValue(o.fn == Fn::kRank ? rank : dense);
          }
          break;
        }
        case Fn::kShift:
          for (size_t i = 0; i < n; ++i) {
            const int64_t j = static_cast<int64_t>(i) + o.shift_by;
            if (j >= 0 && j < static_cast<int64_t>(n)) {
              ROCKDOC_ASSIGN_OR_RETURN(values[k][i], o.shift_output->Evaluate(VariablesFor(rows[begin + j].doc)));
              if (!values[k][i].ok()) values[k][i] = NullValue();
            } else if (o.shift_default != nullptr) {
              ROCKDOC_ASSIGN_OR_RETURN(values[k][i], o.shift_default->Evaluate(VariablesFor(rows[begin + i].doc)));
            } else {
              values[k][i] = NullValue();
            }
          }
          break;
        case Fn::kAccumulator: {
          const bool whole = !o.has_window;
          const bool running = o.has_window && !o.range && o.lo.kind == Bound::kUnbounded &&
                               o.hi.kind == Bound::kCurrent;
          if (whole || running) {
            Accumulator acc(&o.acc);
            for (size_t i = 0; i < n; ++i) {
              ROCKDOC_RETURN_IF_ERROR(acc.Add(rows[begin + i].doc.view(), VariablesFor(rows[begin + i].doc)).status());
              if (running) {
                ROCKDOC_ASSIGN_OR_RETURN(values[k][i], acc.Result());
              }
            }
            if (whole) {
              ROCKDOC_ASSIGN_OR_RETURN(Value all, acc.Result());
              for (size_t i = 0; i < n; ++i) values[k][i] = all;
            }
            break;
          }
          for (size_t i = 0; i < n; ++i) {
            const auto [from, to] = Window(o, rows, begin, end, begin + i);
            Accumulator acc(&o.acc);
            for (size_t j = from; j < to; ++j) {
              ROCKDOC_RETURN_IF_ERROR(acc.Add(rows[j].doc.view(), VariablesFor(rows[j].doc)).status());
            }
            ROCKDOC_ASSIGN_OR_RETURN(values[k][i], acc.Result());
          }
          break;
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      // The document with the output fields set (replaced in place, or added).
      BsonBuilder b;
      const DocumentView doc = rows[begin + i].doc.view();
      for (const Element& e : doc) {
        auto it = std::find_if(outputs_.begin(), outputs_.end(), [&](const OutputSpec& o) { return o.field == e.key(); });
        if (it == outputs_.end()) {
          b.AppendElement(e);
        } else {
          const Value& v = values[static_cast<size_t>(it - outputs_.begin())][i];
          if (v.ok()) b.AppendElementAs(e.key(), v.element());
        }
      }
      for (size_t k = 0; k < outputs_.size(); ++k) {
        if (!doc.Get(outputs_[k].field).ok() && values[k][i].ok()) {
          b.AppendElementAs(outputs_[k].field, values[k][i].element());
        }
      }
      results->push_back(std::move(b).Build());
    }
    return Status::OK();
  }

  ExpressionPtr partition_by_;
  SortPattern sort_by_;
  std::vector<OutputSpec> outputs_;
  SpillPolicy policy_;
  SpilledRuns runs_;
};

}  // namespace

StatusOr<std::unique_ptr<Stage>> ParseSetWindowFields(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(9, "the $setWindowFields stage specification must be an object");
  }
  Element partition, sort, output;
  ROCKDOC_RETURN_IF_ERROR(DecodeStageFields(
      "$setWindowFields", spec.Document(),
      {{"partitionBy", &partition}, {"sortBy", &sort}, {"output", &output}}));
  if (!output.ok()) return StageFailed(40414, "BSON field '$setWindowFields.output' is missing but a required field");
  if (output.type() != BsonType::kDocument) {
    return StageFailed(14, "BSON field '$setWindowFields.output' is the wrong type '" +
                               std::string(BsonTypeAlias(output.type())) + "', expected type 'object'");
  }
  ExpressionPtr partition_by;
  if (partition.ok()) {
    ROCKDOC_ASSIGN_OR_RETURN(partition_by, ParseExpression(partition, ctx.scope));
  }
  SortPattern sort_by;
  if (sort.ok()) {
    if (sort.type() != BsonType::kDocument) {
      return StageFailed(14, "BSON field '$setWindowFields.sortBy' is the wrong type '" +
                                 std::string(BsonTypeAlias(sort.type())) + "', expected type 'object'");
    }
    ROCKDOC_ASSIGN_OR_RETURN(sort_by, SortPattern::Parse(sort.Document()));
  }
  std::vector<OutputSpec> outputs;
  for (const Element& f : output.Document()) {
    if (f.key().empty() || f.key()[0] == '$' || f.key().find('.') != std::string_view::npos) {
      return Status(ErrorCode::kNotImplemented,
                    "$setWindowFields output field '" + std::string(f.key()) +
                        "': dotted and $-prefixed names are not supported by rockdoc yet");
    }
    ROCKDOC_ASSIGN_OR_RETURN(OutputSpec o, ParseOutputField(f.key(), f, ctx.scope));
    const bool ranked = o.fn == Fn::kRank || o.fn == Fn::kDenseRank;
    if (ranked && sort_by.size() != 1) {
      return StageFailed(5371602, std::string(o.fn == Fn::kRank ? "$rank" : "$denseRank") +
                                      " must be specified with a top level sortBy expression with "
                                      "exactly one element");
    }
    if ((o.fn == Fn::kShift || o.fn == Fn::kDocumentNumber) && sort_by.empty()) {
      return StageFailed(5371602, std::string(o.fn == Fn::kShift ? "$shift" : "$documentNumber") +
                                      " requires a sortBy");
    }
    if (o.range && o.has_window && sort_by.size() != 1) {
      return StageFailed(5339902, "Range-based window requires sortBy a single field.");
    }
    if (!o.range && o.has_window && sort_by.empty() &&
        (o.lo.kind != Bound::kUnbounded || o.hi.kind != Bound::kUnbounded)) {
      return StageFailed(5339901, "Document-based bounds require a sortBy");
    }
    outputs.push_back(std::move(o));
  }
  return std::unique_ptr<Stage>(
      std::make_unique<SetWindowFieldsStage>(std::move(partition_by), std::move(sort_by), std::move(outputs), ctx));
}

}  // namespace rockdoc::internal
