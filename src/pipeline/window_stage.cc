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
// its input (blocking, 100 MB); with allowDiskUse it spills sorted runs and
// merges them a partition at a time, and a partition past the limit is read
// back by position from a run of its own (a range window there needs
// ascending numeric sortBy values: its bounds move forward by two pointers).
#include <algorithm>
#include <functional>
#include <iterator>
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
  // partition at a time in memory, or, one past the memory limit, in a run
  // read back by position (SpilledPartition); the results are written to a
  // run of their own that the output reads.
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
    // A partition past the limit goes to a run of its own (big), its rows
    // counted in big_rows, its key in big_key.
    std::unique_ptr<SpillWriter> big;
    size_t big_rows = 0;
    Value big_key;
    auto end_big = [&]() -> Status {
      ROCKDOC_RETURN_IF_ERROR(SpilledPartition(std::move(big), big_rows, out.get()));
      big.reset();
      big_rows = 0;
      return Status::OK();
    };
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least(compare));
      if (run < 0) break;
      Row r = FromCarrier(runs_.head(run).view());
      ROCKDOC_RETURN_IF_ERROR(runs_.Advance(run));
      const bool same = partition_by_ == nullptr ||
                        CompareValues((big ? big_key : part.empty() ? r.partition : part.front().partition).element(),
                                      r.partition.element()) == 0;
      if (big) {
        if (same) {
          ROCKDOC_RETURN_IF_ERROR(big->Add(Carrier(r).bytes()));
          ++big_rows;
          continue;
        }
        ROCKDOC_RETURN_IF_ERROR(end_big());
      } else if (!part.empty() && !same) {
        ROCKDOC_RETURN_IF_ERROR(flush());
      }
      part_bytes += RowBytes(r.doc);
      part.push_back(std::move(r));
      if (part_bytes > policy_.memory_limit) {
        // This partition does not fit: its rows so far, and the rest, to a run.
        ROCKDOC_ASSIGN_OR_RETURN(big, policy_.new_run());
        big_key = part.front().partition;
        for (const Row& row : part) ROCKDOC_RETURN_IF_ERROR(big->Add(Carrier(row).bytes()));
        big_rows = part.size();
        part.clear();
        part.shrink_to_fit();
        part_bytes = 0;
      }
    }
    if (big) ROCKDOC_RETURN_IF_ERROR(end_big());
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

  // A partition's rows by position: a slice of a vector in memory, or (a
  // partition past the memory limit) a spill run read by position through
  // a cache of at most half the limit. A row from Get is valid until the
  // next Get.
  class Rows {
   public:
    virtual ~Rows() = default;
    virtual size_t size() const = 0;
    virtual StatusOr<const Row*> Get(size_t i) = 0;
    virtual bool on_disk() const { return false; }
  };
  class MemoryRows : public Rows {
   public:
    MemoryRows(const std::vector<Row>& rows, size_t begin, size_t end)
        : rows_(rows), begin_(begin), n_(end - begin) {}
    size_t size() const override { return n_; }
    StatusOr<const Row*> Get(size_t i) override { return &rows_[begin_ + i]; }

   private:
    const std::vector<Row>& rows_;
    size_t begin_, n_;
  };
  class SpilledRows : public Rows {
   public:
    SpilledRows(const SetWindowFieldsStage* stage, std::unique_ptr<SpillReader> run, size_t n,
                int64_t budget)
        : stage_(stage), run_(std::move(run)), n_(n), budget_(budget) {}
    size_t size() const override { return n_; }
    bool on_disk() const override { return true; }
    StatusOr<const Row*> Get(size_t i) override {
      if (auto it = cache_.find(i); it != cache_.end()) return &it->second;
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, run_->At(i));
      if (!record) return Status(ErrorCode::kInternalError, "a spilled partition lost a row");
      const Document carrier = Document::AdoptValidated(std::string(*record));
      Row r = stage_->FromCarrier(carrier.view());
      bytes_ += RowBytes(r.doc);
      // Evict the rows farthest from this one: windows move forward.
      auto distance = [i](size_t p) { return p > i ? p - i : i - p; };
      while (bytes_ > budget_ && !cache_.empty()) {
        auto victim = distance(cache_.begin()->first) >= distance(std::prev(cache_.end())->first)
                          ? cache_.begin()
                          : std::prev(cache_.end());
        bytes_ -= RowBytes(victim->second.doc);
        cache_.erase(victim);
      }
      return &cache_.emplace(i, std::move(r)).first->second;
    }

   private:
    const SetWindowFieldsStage* stage_;
    std::unique_ptr<SpillReader> run_;
    size_t n_;
    int64_t budget_, bytes_ = 0;
    std::map<size_t, Row> cache_;
  };

  static double RangeNumber(const Value& v) {
    if (!v.ok()) return 0;
    if (v.type() == BsonType::kDateTime) return static_cast<double>(v.element().DateTime());
    return v.element().NumberAsDouble();
  }

  // The window of row i: positions [from, to) of the partition.
  StatusOr<std::pair<size_t, size_t>> Window(const OutputSpec& o, Rows& rows, size_t i) const {
    const size_t n = rows.size();
    if (!o.range) {
      auto at = [&](const Bound& b, bool upper) -> int64_t {
        if (b.kind == Bound::kUnbounded) return upper ? static_cast<int64_t>(n) : 0;
        const int64_t pos = static_cast<int64_t>(i) + (b.kind == Bound::kCurrent ? 0 : static_cast<int64_t>(b.offset));
        return upper ? pos + 1 : pos;
      };
      const int64_t from = std::max<int64_t>(at(o.lo, false), 0);
      const int64_t to = std::min<int64_t>(at(o.hi, true), static_cast<int64_t>(n));
      return std::pair<size_t, size_t>(static_cast<size_t>(from), static_cast<size_t>(std::max(from, to)));
    }
    // Range: sortBy values within [v + lo, v + hi].
    ROCKDOC_ASSIGN_OR_RETURN(const Row* current, rows.Get(i));
    const double v = RangeNumber(current->sort_key[0]);
    const double scale = o.unit_ms > 0 ? static_cast<double>(o.unit_ms) : 1.0;
    size_t from = 0, to = n;
    if (o.lo.kind != Bound::kUnbounded) {
      const double lo = v + (o.lo.kind == Bound::kCurrent ? 0 : o.lo.offset * scale);
      for (; from < n; ++from) {
        ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(from));
        if (!(RangeNumber(r->sort_key[0]) < lo)) break;
      }
    }
    if (o.hi.kind != Bound::kUnbounded) {
      const double hi = v + (o.hi.kind == Bound::kCurrent ? 0 : o.hi.offset * scale);
      for (to = from; to < n; ++to) {
        ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(to));
        if (!(RangeNumber(r->sort_key[0]) <= hi)) break;
      }
    }
    return std::pair<size_t, size_t>(from, std::max(from, to));
  }

  // Each output's value for each row of the partition: emit(k, i, value)
  // (missing: not set), output by output, rows in order.
  using Emit = std::function<Status(size_t k, size_t i, Value v)>;
  Status ComputeOutputs(Rows& rows, const Emit& emit) const {
    const size_t n = rows.size();
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const OutputSpec& o = outputs_[k];
      switch (o.fn) {
        case Fn::kDocumentNumber:
          for (size_t i = 0; i < n; ++i) ROCKDOC_RETURN_IF_ERROR(emit(k, i, IntegerValue(static_cast<int64_t>(i + 1))));
          break;
        case Fn::kRank:
        case Fn::kDenseRank: {
          int64_t rank = 0, dense = 0;
          std::vector<Value> previous;
          for (size_t i = 0; i < n; ++i) {
            ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(i));
            if (i == 0 || sort_by_.CompareKeys(previous, r->sort_key) != 0) {
              rank = static_cast<int64_t>(i + 1);
              ++dense;
            }
            previous = r->sort_key;
            ROCKDOC_RETURN_IF_ERROR(emit(k, i, IntegerValue(o.fn == Fn::kRank ? rank : dense)));
          }
          break;
        }
        case Fn::kShift:
          for (size_t i = 0; i < n; ++i) {
            const int64_t j = static_cast<int64_t>(i) + o.shift_by;
            Value v;
            if (j >= 0 && j < static_cast<int64_t>(n)) {
              ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(static_cast<size_t>(j)));
              ROCKDOC_ASSIGN_OR_RETURN(v, o.shift_output->Evaluate(VariablesFor(r->doc)));
              if (!v.ok()) v = NullValue();
            } else if (o.shift_default != nullptr) {
              ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(i));
              ROCKDOC_ASSIGN_OR_RETURN(v, o.shift_default->Evaluate(VariablesFor(r->doc)));
            } else {
              v = NullValue();
            }
            ROCKDOC_RETURN_IF_ERROR(emit(k, i, std::move(v)));
          }
          break;
        case Fn::kAccumulator: {
          const bool whole = !o.has_window;
          const bool running = o.has_window && !o.range && o.lo.kind == Bound::kUnbounded &&
                               o.hi.kind == Bound::kCurrent;
          if (whole || running) {
            Accumulator acc(&o.acc);
            for (size_t i = 0; i < n; ++i) {
              ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(i));
              ROCKDOC_RETURN_IF_ERROR(acc.Add(r->doc.view(), VariablesFor(r->doc)).status());
              if (running) {
                ROCKDOC_ASSIGN_OR_RETURN(Value v, acc.Result());
                ROCKDOC_RETURN_IF_ERROR(emit(k, i, std::move(v)));
              }
            }
            if (whole) {
              ROCKDOC_ASSIGN_OR_RETURN(Value all, acc.Result());
              for (size_t i = 0; i < n; ++i) ROCKDOC_RETURN_IF_ERROR(emit(k, i, all));
            }
            break;
          }
          // A range window over a partition on disk: its bounds only move
          // forward while the sortBy values ascend, so two pointers find them
          // (a scan from the start per document would seek quadratically);
          // values that do not ascend are refused.
          size_t range_from = 0, range_to = 0;
          double previous = 0;
          for (size_t i = 0; i < n; ++i) {
            std::pair<size_t, size_t> window;
            if (o.range && rows.on_disk()) {
              ROCKDOC_ASSIGN_OR_RETURN(const Row* current, rows.Get(i));
              const double v = RangeNumber(current->sort_key[0]);
              if (!(i == 0 || v >= previous)) {
                return Status(ErrorCode::kExceededMemoryLimit,
                              "$setWindowFields: a range window over a partition larger than the "
                              "memory limit needs ascending numeric sortBy values in rockdoc");
              }
              previous = v;
              const double scale = o.unit_ms > 0 ? static_cast<double>(o.unit_ms) : 1.0;
              if (o.lo.kind == Bound::kUnbounded) {
                range_from = 0;
              } else {
                const double lo = v + (o.lo.kind == Bound::kCurrent ? 0 : o.lo.offset * scale);
                for (; range_from < n; ++range_from) {
                  ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(range_from));
                  if (!(RangeNumber(r->sort_key[0]) < lo)) break;
                }
              }
              if (o.hi.kind == Bound::kUnbounded) {
                range_to = n;
              } else {
                const double hi = v + (o.hi.kind == Bound::kCurrent ? 0 : o.hi.offset * scale);
                for (range_to = std::max(range_to, range_from); range_to < n; ++range_to) {
                  ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(range_to));
                  if (!(RangeNumber(r->sort_key[0]) <= hi)) break;
                }
              }
              window = {range_from, std::max(range_from, range_to)};
            } else {
              ROCKDOC_ASSIGN_OR_RETURN(window, Window(o, rows, i));
            }
            Accumulator acc(&o.acc);
            for (size_t j = window.first; j < window.second; ++j) {
              ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(j));
              ROCKDOC_RETURN_IF_ERROR(acc.Add(r->doc.view(), VariablesFor(r->doc)).status());
            }
            ROCKDOC_ASSIGN_OR_RETURN(Value v, acc.Result());
            ROCKDOC_RETURN_IF_ERROR(emit(k, i, std::move(v)));
          }
          break;
        }
      }
    }
    return Status::OK();
  }

  // The document with the output fields set (replaced in place, or added);
  // values[k] is output k's (missing: not set).
  Document WithOutputs(DocumentView doc, const std::vector<Value>& values) const {
    BsonBuilder b;
    for (const Element& e : doc) {
      auto it = std::find_if(outputs_.begin(), outputs_.end(), [&](const OutputSpec& o) { return o.field == e.key(); });
      if (it == outputs_.end()) {
        b.AppendElement(e);
      } else {
        const Value& v = values[static_cast<size_t>(it - outputs_.begin())];
        if (v.ok()) b.AppendElementAs(e.key(), v.element());
      }
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (!doc.Get(outputs_[k].field).ok() && values[k].ok()) {
        b.AppendElementAs(outputs_[k].field, values[k].element());
      }
    }
    return std::move(b).Build();
  }

  Status Partition(const std::vector<Row>& rows, size_t begin, size_t end, std::vector<Document>* results) {
    const size_t n = end - begin;
    std::vector<std::vector<Value>> values(n, std::vector<Value>(outputs_.size()));
    MemoryRows memory(rows, begin, end);
    ROCKDOC_RETURN_IF_ERROR(ComputeOutputs(memory, [&](size_t k, size_t i, Value v) {
      values[i][k] = std::move(v);
      return Status::OK();
    }));
    for (size_t i = 0; i < n; ++i) results->push_back(WithOutputs(rows[begin + i].doc.view(), values[i]));
    return Status::OK();
  }

  // A partition past the memory limit, spilled to `run` (its rows, as
  // carriers, in order): the rows read back by position through a cache,
  // each output's values written to a run of its own, then the documents
  // assembled row by row into `out`. Memory: the cache (half the limit).
  Status SpilledPartition(std::unique_ptr<SpillWriter> run, size_t n, SpillWriter* out) {
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> rows_run, run->Finish());
    SpilledRows rows(this, std::move(rows_run), n, std::max<int64_t>(policy_.memory_limit / 2, 1));
    std::vector<std::unique_ptr<SpillWriter>> columns;
    for (size_t k = 0; k < outputs_.size(); ++k) {
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> column, policy_.new_run());
      columns.push_back(std::move(column));
    }
    ROCKDOC_RETURN_IF_ERROR(ComputeOutputs(rows, [&](size_t k, size_t, Value v) {
      BsonBuilder b;
      if (v.ok()) b.AppendElementAs("v", v.element());
      return columns[k]->Add(std::move(b).Build().bytes());
    }));
    std::vector<std::unique_ptr<SpillReader>> values;
    for (auto& column : columns) {
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> reader, column->Finish());
      values.push_back(std::move(reader));
    }
    std::vector<Value> row_values(outputs_.size());
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < values.size(); ++k) {
        ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, values[k]->Next());
        if (!record) return Status(ErrorCode::kInternalError, "a spilled window output lost a value");
        const Document holder = Document::AdoptValidated(std::string(*record));
        const Element v = holder.Get("v");
        row_values[k] = v.ok() ? Value::FromElement(v) : Value();
      }
      ROCKDOC_ASSIGN_OR_RETURN(const Row* r, rows.Get(i));
      ROCKDOC_RETURN_IF_ERROR(out->Add(WithOutputs(r->doc.view(), row_values).bytes()));
    }
    return Status::OK();
  }

  ExpressionPtr partition_by_;
  SortPattern sort_by_;
  std::vector<OutputSpec> outputs_;
  SpillPolicy policy_;
  SpilledRuns runs_;
};


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

}  // namespace

void AddWindowStage(StageTable* table) {
  table->emplace("$setWindowFields", StageDef{.parse = &ParseSetWindowFields});
}

}  // namespace rockdoc::internal
