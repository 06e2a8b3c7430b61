// pipeline/bucket_stages.cc: $bucket (documents grouped into the ranges
// between given boundaries) and $bucketAuto (into n ranges of about equal
// size, chosen from the data).
#include <algorithm>
#include <cmath>
#include <limits>

#include "pipeline/stage.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

std::string Type(const Element& e) { return std::string(BsonTypeAlias(e.type())); }

// $bucket's group key: the lower boundary of the range holding groupBy's
// value, else the default (40066, as MongoDB's $switch, when there is none).
class BucketKey : public Expression {
 public:
  BucketKey(ExpressionPtr group_by, std::vector<Value> boundaries, Value fallback)
      : group_by_(std::move(group_by)), boundaries_(std::move(boundaries)), default_(std::move(fallback)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, group_by_->Evaluate(vars));
    const Value key = v.ok() ? v : NullValue();
    if (CompareValues(key.element(), boundaries_.front().element()) >= 0 &&
        CompareValues(key.element(), boundaries_.back().element()) < 0) {
      // The last boundary not above the value.
      auto it = std::upper_bound(boundaries_.begin(), boundaries_.end(), key, ValueLess());
      return *std::prev(it);
    }
    if (default_.ok()) return default_;
    return StageFailed(40066, "$switch could not find a matching branch for an input, and no "
                              "default was specified.");
  }

 private:
  ExpressionPtr group_by_;
  std::vector<Value> boundaries_;
  Value default_;
};

// groupBy: a $-path or an operator expression object.
Status CheckGroupBy(const Element& e, int code, std::string_view stage) {
  const bool path = e.type() == BsonType::kString && e.String().substr(0, 1) == "$";
  const bool object = e.type() == BsonType::kDocument && !e.Document().empty() &&
                      (*e.Document().begin()).key().substr(0, 1) == "$";
  if (path || object) return Status::OK();
  return StageFailed(code, "The " + std::string(stage) + " 'groupBy' field must be defined as a "
                           "$-prefixed path or an expression, but found: " +
                               ValueToJson(e, JsonFormat::kShell) + ".");
}

StatusOr<std::vector<AccumulatorSpec>> ParseOutput(const Element& output, std::string_view stage,
                                                   int code, VariableScope* scope) {
  std::vector<AccumulatorSpec> out;
  if (!output.ok()) {
    // {count: {$sum: 1}}
    BsonBuilder b;
    b.OpenDocument("count").AppendInt32("$sum", 1).Close();
    Document d = std::move(b).Build();
    ROCKDOC_ASSIGN_OR_RETURN(AccumulatorSpec count,
                             ParseAccumulator("count", *d.Get("count").Document().begin(), scope));
    out.push_back(std::move(count));
    return out;
  }
  if (output.type() != BsonType::kDocument) {
    return StageFailed(code, "The " + std::string(stage) +
                                 " 'output' field must be an object, but found type: " +
                                 Type(output) + ".");
  }
  for (const Element& f : output.Document()) {
    if (f.type() != BsonType::kDocument || f.Document().empty()) {
      return StageFailed(40234, "The field '" + std::string(f.key()) + "' must be an accumulator object");
    }
    ROCKDOC_ASSIGN_OR_RETURN(AccumulatorSpec a, ParseAccumulator(f.key(), *f.Document().begin(), scope));
    out.push_back(std::move(a));
  }
  return out;
}

// ---- $bucketAuto ----

class BucketAutoStage : public BlockingStage {
 public:
  BucketAutoStage(ExpressionPtr group_by, int64_t buckets, std::vector<AccumulatorSpec> output,
                  const StageContext& ctx)
      : BlockingStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        group_by_(std::move(group_by)),
        buckets_(buckets),
        output_(std::move(output)),
        policy_(SpillPolicy::Of(ctx.options)) {}

 private:
  struct Item {
    Value key;
    Document doc;
  };

  static int64_t ItemBytes(const Document& doc, const Value& key) {
    return static_cast<int64_t>(doc.size() + key.element().value_size()) + 32;
  }
  static void SortItems(std::vector<Item>* items) {
    std::stable_sort(items->begin(), items->end(),
                     [](const Item& a, const Item& b) { return ValueLess()(a.key, b.key); });
  }
  // Sorts the items and writes them as one more run of {k: key, d: doc}.
  Status SpillItems(std::vector<Item>* items) {
    SortItems(items);
    ROCKDOC_RETURN_IF_ERROR(runs_.Spill(policy_, [&](SpillWriter* w) -> Status {
      for (const Item& i : *items) {
        BsonBuilder b;
        b.AppendElementAs("k", i.key.element()).AppendDocument("d", i.doc.view());
        ROCKDOC_RETURN_IF_ERROR(w->Add(std::move(b).Build().bytes()));
      }
      return Status::OK();
    }));
    items->clear();
    items->shrink_to_fit();
    return Status::OK();
  }

  // After spilling: the runs merged by key (stable), the buckets formed as
  // the items stream by (the count is known: each bucket's size is), with
  // only the open bucket's accumulators in memory.
  Status BuildFromRuns(int64_t total, std::vector<Document>* results) {
    ROCKDOC_RETURN_IF_ERROR(runs_.Start());
    const double approx = static_cast<double>(total) / static_cast<double>(buckets_);
    const int64_t size = std::max<int64_t>(1, std::llround(approx));
    std::vector<Accumulator> accs;
    std::optional<Value> min, last;
    int64_t in_bucket = 0, closed = 0;
    auto close = [&](const Value& max) -> Status {
      BsonBuilder b;
      b.OpenDocument("_id").AppendElementAs("min", min->element()).AppendElementAs("max", max.element()).Close();
      for (size_t i = 0; i < output_.size(); ++i) {
        ROCKDOC_ASSIGN_OR_RETURN(Value v, accs[i].Result());
        b.AppendElementAs(output_[i].field, v.element());
      }
      results->push_back(std::move(b).Build());
      ++closed;
      accs.clear();
      min.reset();
      in_bucket = 0;
      return Status::OK();
    };
    const auto compare = [](DocumentView a, DocumentView b) -> StatusOr<int> {
      return CompareValues(a.Get("k"), b.Get("k"));
    };
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least(compare));
      if (run < 0) break;
      const Document item = runs_.head(run);
      ROCKDOC_RETURN_IF_ERROR(runs_.Advance(run));
      const Value key = Value::FromElement(item.Get("k"));
      // Equal values never split; the last bucket takes the rest.
      if (min && in_bucket >= size && closed < buckets_ - 1 &&
          CompareValues(key.element(), last->element()) != 0) {
        ROCKDOC_RETURN_IF_ERROR(close(key));
      }
      if (!min) {
        min = key;
        for (const AccumulatorSpec& a : output_) accs.emplace_back(&a);
      }
      const Document doc = Document::AdoptValidated(std::string(item.Get("d").Document().bytes()));
      const ExpressionVariables vars = VariablesFor(doc);
      for (Accumulator& acc : accs) ROCKDOC_RETURN_IF_ERROR(acc.Add(doc.view(), vars).status());
      last = key;
      ++in_bucket;
    }
    if (min) ROCKDOC_RETURN_IF_ERROR(close(*last));
    return Status::OK();
  }

  Status Build(std::vector<Document>* results) override {
    std::vector<Item> items;
    int64_t bytes = 0, total = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      ROCKDOC_ASSIGN_OR_RETURN(Value key, group_by_->Evaluate(VariablesFor(*doc)));
      if (!key.ok()) key = NullValue();
      ++total;
      bytes += ItemBytes(*doc, key);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$bucketAuto", policy_.allow_disk_use);
        ROCKDOC_RETURN_IF_ERROR(SpillItems(&items));
        bytes = ItemBytes(*doc, key);
      }
      items.push_back(Item{std::move(key), std::move(*doc)});
    }
    if (!runs_.empty()) {
      ROCKDOC_RETURN_IF_ERROR(SpillItems(&items));
      return BuildFromRuns(total, results);
    }
    SortItems(&items);
    if (items.empty()) return Status::OK();
    // MongoDB's distribution: about n/buckets per bucket, and equal values
    // never split across two buckets.
    const double approx = static_cast<double>(items.size()) / static_cast<double>(buckets_);
    const size_t size = std::max<size_t>(1, static_cast<size_t>(std::llround(approx)));
    std::vector<std::pair<size_t, size_t>> ranges;  // [begin, end)
    size_t begin = 0;
    while (begin < items.size()) {
      size_t end = std::min(items.size(), begin + size);
      if (static_cast<int64_t>(ranges.size()) == buckets_ - 1) end = items.size();
      while (end < items.size() &&
             CompareValues(items[end].key.element(), items[end - 1].key.element()) == 0) {
        ++end;
      }
      ranges.emplace_back(begin, end);
      begin = end;
    }
    for (size_t r = 0; r < ranges.size(); ++r) {
      std::vector<Accumulator> accs;
      for (const AccumulatorSpec& a : output_) accs.emplace_back(&a);
      for (size_t i = ranges[r].first; i < ranges[r].second; ++i) {
        const ExpressionVariables vars = VariablesFor(items[i].doc);
        for (Accumulator& acc : accs) {
          ROCKDOC_RETURN_IF_ERROR(acc.Add(items[i].doc.view(), vars).status());
        }
      }
      const Value& min = items[ranges[r].first].key;
      // A bucket ends where the next begins; the last at its own maximum.
      const Value& max = r + 1 < ranges.size() ? items[ranges[r + 1].first].key
                                               : items[ranges[r].second - 1].key;
      BsonBuilder b;
      b.OpenDocument("_id").AppendElementAs("min", min.element()).AppendElementAs("max", max.element()).Close();
      for (size_t i = 0; i < output_.size(); ++i) {
        ROCKDOC_ASSIGN_OR_RETURN(Value v, accs[i].Result());
        b.AppendElementAs(output_[i].field, v.element());
      }
      results->push_back(std::move(b).Build());
    }
    return Status::OK();
  }

  void AppendExecutionStats(BsonBuilder* out) const override { runs_.AppendExecutionStats(out); }

  ExpressionPtr group_by_;
  int64_t buckets_;
  std::vector<AccumulatorSpec> output_;
  SpillPolicy policy_;
  SpilledRuns runs_;
};


StatusOr<std::unique_ptr<Stage>> ParseBucket(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(40201, "Argument to $bucket stage must be an object, but found type: " +
                                  Type(spec) + ".");
  }
  Element group_by, boundaries, fallback, output;
  for (const Element& f : spec.Document()) {
    if (f.key() == "groupBy") {
      group_by = f;
    } else if (f.key() == "boundaries") {
      boundaries = f;
    } else if (f.key() == "default") {
      fallback = f;
    } else if (f.key() == "output") {
      output = f;
    } else {
      return StageFailed(40197, "Unrecognized option to $bucket: " + std::string(f.key()) + ".");
    }
  }
  if (!group_by.ok() || !boundaries.ok()) {
    return StageFailed(40198, "$bucket requires 'groupBy' and 'boundaries' to be specified.");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckGroupBy(group_by, 40202, "$bucket"));
  if (boundaries.type() != BsonType::kArray) {
    return StageFailed(40200, "The $bucket 'boundaries' field must be an array, but found type: " +
                                  Type(boundaries) + ".");
  }
  std::vector<Value> bounds;
  for (const Element& b : boundaries.Array()) {
    if (!bounds.empty()) {
      const Element prev = bounds.back().element();
      const bool numbers = prev.IsNumber() && b.IsNumber();
      if (!numbers && prev.type() != b.type()) {
        return StageFailed(40193, "All values in the the 'boundaries' option to $bucket must have "
                                  "the same type. Found conflicting types " + Type(prev) +
                                      " and " + Type(b) + ".");
      }
      if (CompareValues(prev, b) >= 0) {
        return StageFailed(40194, "The 'boundaries' option to $bucket must be sorted in ascending "
                                  "order, but elements " + ValueToJson(prev, JsonFormat::kShell) +
                                      " and " + ValueToJson(b, JsonFormat::kShell) +
                                      " are not in ascending order.");
      }
    }
    bounds.push_back(Value::FromElement(b));
  }
  if (bounds.size() < 2) {
    return StageFailed(40192, "The $bucket 'boundaries' field must have at least 2 values, but "
                              "found " + std::to_string(bounds.size()) + " value(s).");
  }
  Value default_value;
  if (fallback.ok()) {
    if (CompareValues(fallback, bounds.front().element()) >= 0 &&
        CompareValues(fallback, bounds.back().element()) < 0) {
      return StageFailed(40199, "The $bucket 'default' field must be less than the lowest "
                                "boundary or greater than or equal to the highest boundary.");
    }
    default_value = Value::FromElement(fallback);
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr group_expr, ParseExpression(group_by, ctx.scope));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<AccumulatorSpec> accs,
                           ParseOutput(output, "$bucket", 40196, ctx.scope));
  // {$group: {_id: <bucket>, ...}}, {$sort: {_id: 1}}, as MongoDB runs it.
  std::vector<std::unique_ptr<Stage>> parts;
  parts.push_back(MakeGroupStage(
      std::make_unique<BucketKey>(std::move(group_expr), std::move(bounds), std::move(default_value)),
      std::move(accs), ctx));
  BsonBuilder sort;
  sort.AppendInt32("_id", 1);
  ROCKDOC_ASSIGN_OR_RETURN(SortPattern pattern, SortPattern::Parse(std::move(sort).Build()));
  parts.push_back(MakeSortStage(std::move(pattern), ctx.options));
  return std::unique_ptr<Stage>(std::make_unique<SequenceStage>(std::move(parts)));
}

StatusOr<std::unique_ptr<Stage>> ParseBucketAuto(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(40240, "The argument to $bucketAuto must be an object, but found type: " +
                                  Type(spec) + ".");
  }
  Element group_by, buckets, output;
  for (const Element& f : spec.Document()) {
    if (f.key() == "groupBy") {
      group_by = f;
    } else if (f.key() == "buckets") {
      buckets = f;
    } else if (f.key() == "output") {
      output = f;
    } else if (f.key() == "granularity") {
      return Status(ErrorCode::kNotImplemented,
                    "$bucketAuto's granularity is not supported by rockdoc yet");
    } else {
      return StageFailed(40245, "Unrecognized option to $bucketAuto: " + std::string(f.key()) + ".");
    }
  }
  if (!group_by.ok() || !buckets.ok()) {
    return StageFailed(40246, "$bucketAuto requires 'groupBy' and 'buckets' to be specified");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckGroupBy(group_by, 40239, "$bucketAuto"));
  int64_t n = 0;
  if (!buckets.IsNumber() || !buckets.ExactInt64(&n) || n > std::numeric_limits<int32_t>::max()) {
    return StageFailed(40241, "The $bucketAuto 'buckets' field must be a numeric value, but found "
                              "type: " + Type(buckets) + ".");
  }
  if (n <= 0) {
    return StageFailed(40243, "The $bucketAuto 'buckets' field must be greater than 0, but found: " +
                                  std::to_string(n) + ".");
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr group_expr, ParseExpression(group_by, ctx.scope));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<AccumulatorSpec> accs,
                           ParseOutput(output, "$bucketAuto", 40244, ctx.scope));
  return std::unique_ptr<Stage>(
      std::make_unique<BucketAutoStage>(std::move(group_expr), n, std::move(accs), ctx));
}

}  // namespace

void AddBucketStages(StageTable* table) {
  table->emplace("$bucket", StageDef{.parse = &ParseBucket});
  table->emplace("$bucketAuto", StageDef{.parse = &ParseBucketAuto});
}

}  // namespace rockdoc::internal
