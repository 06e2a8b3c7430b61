// pipeline/fill_stages.cc: $densify (documents added where a numeric or
// date field skips steps of a sequence) and $fill (null and missing fields
// given a value, the last value seen, or a linear interpolation). Both hold
// their input (blocking, 100 MB) to order it by partition and field.
#include <algorithm>
#include <cmath>
#include <map>

#include "pipeline/stage.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

std::string Type(const Element& e) { return std::string(BsonTypeAlias(e.type())); }

Element At(DocumentView doc, std::string_view path) {
  for (;;) {
    const size_t dot = path.find('.');
    Element e = doc.Get(path.substr(0, dot));
    if (dot == std::string_view::npos) return e;
    if (e.type() != BsonType::kDocument) return Element();
    doc = e.Document();
    path = path.substr(dot + 1);
  }
}

// A document with `path` set to `value` (creating documents on the way).
Document WithPath(DocumentView doc, std::string_view path, const Element& value) {
  const size_t dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  BsonBuilder b;
  bool placed = false;
  for (const Element& e : doc) {
    if (e.key() != head) {
      b.AppendElement(e);
      continue;
    }
    placed = true;
    if (dot == std::string_view::npos) {
      b.AppendElementAs(head, value);
    } else {
      Document sub = WithPath(e.type() == BsonType::kDocument ? e.Document() : DocumentView(), path.substr(dot + 1), value);
      b.AppendDocument(head, sub.view());
    }
  }
  if (!placed) {
    if (dot == std::string_view::npos) {
      b.AppendElementAs(head, value);
    } else {
      Document sub = WithPath(DocumentView(), path.substr(dot + 1), value);
      b.AppendDocument(head, sub.view());
    }
  }
  return std::move(b).Build();
}

Value PartitionKey(DocumentView doc, const std::vector<std::string>& fields) {
  BsonBuilder b;
  b.OpenArray("v");
  for (const std::string& f : fields) {
    Element e = At(doc, f);
    if (e.ok()) {
      b.AppendElementAs("", e);
    } else {
      b.AppendNull("");
    }
  }
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

StatusOr<int64_t> UnitMillis(std::string_view unit) {
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"millisecond", 1}, {"second", 1000}, {"minute", 60'000}, {"hour", 3'600'000},
      {"day", 86'400'000}, {"week", 7 * 86'400'000LL}};
  for (const auto& [name, ms] : kUnits) {
    if (unit == name) return ms;
  }
  if (unit == "month" || unit == "quarter" || unit == "year") {
    return Status(ErrorCode::kNotImplemented,
                  "$densify in " + std::string(unit) + "s is not supported by rockdoc yet");
  }
  return StageFailed(9, "unknown time unit value: " + std::string(unit));
}

// ---- $densify ----

struct DensifySpec {
  std::string field;
  std::vector<std::string> partition_by;
  double step = 1;
  int64_t unit_ms = 0;  // a date field's step unit (0: numbers)
  enum Bounds { kFull, kPartition, kExplicit } bounds = kFull;
  double lo = 0, hi = 0;  // kExplicit: [lo, hi)
};

class DensifyStage : public BlockingStage {
 public:
  DensifyStage(DensifySpec spec, SpillPolicy policy)
      : BlockingStage(0, 0, nullptr), spec_(std::move(spec)), policy_(std::move(policy)) {}

 private:
  double Number(const Element& e) const {
    return e.type() == BsonType::kDateTime ? static_cast<double>(e.DateTime()) : e.NumberAsDouble();
  }
  Value Make(double v) const {
    BsonBuilder b;
    if (spec_.unit_ms > 0) {
      b.AppendDateTime("v", static_cast<int64_t>(v));
    } else if (v == std::floor(v) && std::fabs(v) < 2e9) {
      b.AppendInt32("v", static_cast<int32_t>(v));
    } else {
      b.AppendDouble("v", v);
    }
    Document d = std::move(b).Build();
    return Value::FromElement(d.Get("v"));
  }

  Status Build(std::vector<Document>* out) override {
    std::map<Value, std::vector<std::pair<double, Document>>, ValueLess> partitions;
    std::vector<Value> order;
    int64_t bytes = 0;
    bool any = false;
    double min = 0, max = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      const Element v = At(doc->view(), spec_.field);
      if (!v.ok() || v.IsNull()) {
        out->push_back(std::move(*doc));  // nothing to densify by: passed through
        continue;
      }
      const bool date = v.type() == BsonType::kDateTime;
      if (date != (spec_.unit_ms > 0) || (!date && !v.IsNumber())) {
        return StageFailed(5733201, "$densify: the field '" + spec_.field + "' must be " +
                                        (spec_.unit_ms > 0 ? "a date, since a unit is given" : "numeric without a unit") +
                                        ", found " + Type(v));
      }
      const double x = Number(v);
      if (!any || x < min) min = x;
      if (!any || x > max) max = x;
      any = true;
      bytes += static_cast<int64_t>(doc->size()) + 32;
      if (bytes > policy_.memory_limit) return MemoryExceeded("$densify", policy_.allow_disk_use);
      Value key = PartitionKey(doc->view(), spec_.partition_by);
      auto it = partitions.find(key);
      if (it == partitions.end()) {
        order.push_back(key);
        it = partitions.emplace(key, std::vector<std::pair<double, Document>>()).first;
      }
      it->second.emplace_back(x, std::move(*doc));
    }
    const double step = spec_.step * (spec_.unit_ms > 0 ? static_cast<double>(spec_.unit_ms) : 1.0);
    int64_t generated = 0;
    for (const Value& key : order) {
      auto& docs = partitions[key];
      std::stable_sort(docs.begin(), docs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      double lo = min, hi = max;
      bool hi_inclusive = true;
      if (spec_.bounds == DensifySpec::kPartition) {
        lo = docs.front().first;
        hi = docs.back().first;
      } else if (spec_.bounds == DensifySpec::kExplicit) {
        lo = spec_.lo;
        hi = spec_.hi;
        hi_inclusive = false;
      }
      size_t i = 0;
      for (double v = lo; hi_inclusive ? v <= hi : v < hi; v += step) {
        while (i < docs.size() && docs[i].first < v) out->push_back(std::move(docs[i++].second));
        if (i < docs.size() && docs[i].first == v) continue;  // present
        if (++generated > 10'000'000) {
          return StageFailed(5897900, "$densify would generate more than 10,000,000 documents");
        }
        // A new document: the field, and the partition's fields.
        Document d = WithPath(DocumentView(), spec_.field, Make(v).element());
        size_t k = 0;
        for (const Element& p : key.element().Array()) {
          if (!p.IsNull()) d = WithPath(d.view(), spec_.partition_by[k], p);
          ++k;
        }
        out->push_back(std::move(d));
      }
      while (i < docs.size()) out->push_back(std::move(docs[i++].second));
    }
    return Status::OK();
  }

  DensifySpec spec_;
  SpillPolicy policy_;
};

// ---- $fill ----

struct FillOutput {
  std::string field;
  ExpressionPtr value;  // {value: <expr>}
  enum Method { kValue, kLocf, kLinear } method = kValue;
};

class FillStage : public BlockingStage {
 public:
  FillStage(ExpressionPtr partition_by, std::vector<std::string> partition_fields, SortPattern sort_by,
            std::vector<FillOutput> outputs, const StageContext& ctx)
      : BlockingStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        partition_by_(std::move(partition_by)),
        partition_fields_(std::move(partition_fields)),
        sort_by_(std::move(sort_by)),
        outputs_(std::move(outputs)),
        policy_(SpillPolicy::Of(ctx.options)) {}

 private:
  Status Build(std::vector<Document>* docs) override {
    std::vector<std::pair<Value, Document>> rows;
    int64_t bytes = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      Value key;
      if (partition_by_ != nullptr) {
        ROCKDOC_ASSIGN_OR_RETURN(key, partition_by_->Evaluate(VariablesFor(*doc)));
      } else {
        key = PartitionKey(doc->view(), partition_fields_);
      }
      if (!key.ok()) key = NullValue();
      bytes += static_cast<int64_t>(doc->size()) + 32;
      if (bytes > policy_.memory_limit) return MemoryExceeded("$fill", policy_.allow_disk_use);
      rows.emplace_back(std::move(key), std::move(*doc));
    }
    Status failed;
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      const int c = CompareValues(a.first.element(), b.first.element());
      if (c != 0) return c < 0;
      if (sort_by_.empty()) return false;
      StatusOr<int> s = sort_by_.CompareDocuments(a.second.view(), b.second.view());
      if (!s.ok()) {
        if (failed.ok()) failed = s.status();
        return false;
      }
      return *s < 0;
    });
    ROCKDOC_RETURN_IF_ERROR(failed);
    size_t begin = 0;
    while (begin < rows.size()) {
      size_t end = begin + 1;
      while (end < rows.size() && CompareValues(rows[end].first.element(), rows[begin].first.element()) == 0) ++end;
      for (const FillOutput& o : outputs_) ROCKDOC_RETURN_IF_ERROR(FillPartition(o, &rows, begin, end));
      begin = end;
    }
    for (auto& r : rows) docs->push_back(std::move(r.second));
    return Status::OK();
  }

  static bool Missing(const Element& e) { return !e.ok() || e.IsNull() || e.type() == BsonType::kUndefined; }

  Status FillPartition(const FillOutput& o, std::vector<std::pair<Value, Document>>* rows, size_t begin, size_t end) {
    auto& r = *rows;
    if (o.method == FillOutput::kValue) {
      for (size_t i = begin; i < end; ++i) {
        if (!Missing(At(r[i].second.view(), o.field))) continue;
        ROCKDOC_ASSIGN_OR_RETURN(Value v, o.value->Evaluate(VariablesFor(r[i].second)));
        if (v.ok()) r[i].second = WithPath(r[i].second.view(), o.field, v.element());
      }
      return Status::OK();
    }
    if (o.method == FillOutput::kLocf) {
      Value last;
      for (size_t i = begin; i < end; ++i) {
        const Element e = At(r[i].second.view(), o.field);
        if (!Missing(e)) {
          last = Value::FromElement(e);
        } else if (last.ok()) {
          r[i].second = WithPath(r[i].second.view(), o.field, last.element());
        }
      }
      return Status::OK();
    }
    // Linear: between the nearest non-null values, by the sortBy field's value.
    const std::string sort_field = sort_by_.parts()[0].path.dotted();
    auto position = [&](size_t i) -> StatusOr<double> {
      const Element s = At(r[i].second.view(), sort_field);
      if (s.type() == BsonType::kDateTime) return static_cast<double>(s.DateTime());
      if (s.IsNumber()) return s.NumberAsDouble();
      return StageFailed(5429513, "$linearFill requires the sortBy field to be numeric or a date, found " + Type(s));
    };
    std::optional<size_t> prev;
    for (size_t i = begin; i < end; ++i) {
      const Element e = At(r[i].second.view(), o.field);
      if (Missing(e)) continue;
      if (!e.IsNumber()) return StageFailed(5429413, "$linearFill only supports numeric types, found " + Type(e));
      if (prev && *prev + 1 < i) {
        ROCKDOC_ASSIGN_OR_RETURN(double x0, position(*prev));
        ROCKDOC_ASSIGN_OR_RETURN(double x1, position(i));
        const double y0 = At(r[*prev].second.view(), o.field).NumberAsDouble(), y1 = e.NumberAsDouble();
        for (size_t j = *prev + 1; j < i; ++j) {
          ROCKDOC_ASSIGN_OR_RETURN(double x, position(j));
          const double y = x1 == x0 ? y0 : y0 + (y1 - y0) * (x - x0) / (x1 - x0);
          r[j].second = WithPath(r[j].second.view(), o.field, DoubleValue(y).element());
        }
      }
      prev = i;
    }
    return Status::OK();
  }

  ExpressionPtr partition_by_;
  std::vector<std::string> partition_fields_;
  SortPattern sort_by_;
  std::vector<FillOutput> outputs_;
  SpillPolicy policy_;
};

StatusOr<std::vector<std::string>> FieldList(std::string_view what, const Element& e) {
  if (e.type() != BsonType::kArray) {
    return StageFailed(14, "BSON field '" + std::string(what) + "' is the wrong type '" + Type(e) +
                               "', expected type 'array'");
  }
  std::vector<std::string> out;
  for (const Element& f : e.Array()) {
    if (f.type() != BsonType::kString) {
      return StageFailed(14, "BSON field '" + std::string(what) + "' must be an array of strings");
    }
    out.emplace_back(f.String());
  }
  return out;
}


StatusOr<std::unique_ptr<Stage>> ParseDensify(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(14, "the $densify stage specification must be an object");
  }
  DensifySpec d;
  Element field, range, partition_by;
  ROCKDOC_RETURN_IF_ERROR(DecodeStageFields(
      "$densify", spec.Document(),
      {{"field", &field}, {"partitionByFields", &partition_by}, {"range", &range}}));
  if (partition_by.ok()) {
    ROCKDOC_ASSIGN_OR_RETURN(d.partition_by, FieldList("$densify.partitionByFields", partition_by));
  }
  if (!field.ok() || field.type() != BsonType::kString) {
    return StageFailed(40414, "BSON field '$densify.field' is missing but a required field");
  }
  d.field = std::string(field.String());
  if (!range.ok() || range.type() != BsonType::kDocument) {
    return StageFailed(40414, "BSON field '$densify.range' is missing but a required field");
  }
  Element step, unit, bounds;
  ROCKDOC_RETURN_IF_ERROR(DecodeStageFields("$densify.range", range.Document(),
                                            {{"step", &step}, {"unit", &unit}, {"bounds", &bounds}}));
  if (!step.ok() || !step.IsNumber() || !(step.NumberAsDouble() > 0)) {
    return StageFailed(5733401, "the step parameter in a range statement must be a strictly positive numeric value");
  }
  d.step = step.NumberAsDouble();
  if (unit.ok()) {
    if (unit.type() != BsonType::kString) return StageFailed(14, "$densify's unit must be a string");
    ROCKDOC_ASSIGN_OR_RETURN(d.unit_ms, UnitMillis(unit.String()));
    if (d.step != std::floor(d.step)) {
      return StageFailed(5733402, "The step parameter in a range satement must be a whole number when densifying a date range");
    }
  }
  if (!bounds.ok()) return StageFailed(40414, "BSON field '$densify.range.bounds' is missing but a required field");
  if (bounds.type() == BsonType::kString && bounds.String() == "full") {
    d.bounds = DensifySpec::kFull;
  } else if (bounds.type() == BsonType::kString && bounds.String() == "partition") {
    d.bounds = DensifySpec::kPartition;
  } else if (bounds.type() == BsonType::kArray) {
    std::vector<Element> b;
    for (const Element& e : bounds.Array()) b.push_back(e);
    const bool dates = d.unit_ms > 0;
    if (b.size() != 2 || (dates ? (b[0].type() != BsonType::kDateTime || b[1].type() != BsonType::kDateTime)
                                : (!b[0].IsNumber() || !b[1].IsNumber()))) {
      return StageFailed(5733403, std::string("a bounding array in a range statement must be two ") +
                                      (dates ? "dates" : "numbers") + " of the same type as the step");
    }
    d.bounds = DensifySpec::kExplicit;
    d.lo = dates ? static_cast<double>(b[0].DateTime()) : b[0].NumberAsDouble();
    d.hi = dates ? static_cast<double>(b[1].DateTime()) : b[1].NumberAsDouble();
    if (d.lo > d.hi) return StageFailed(5733402, "the lower bound of a range must not exceed the upper bound");
  } else {
    return StageFailed(5946802, "Bounds must be 'full', 'partition', or an array of two values");
  }
  if (d.bounds == DensifySpec::kPartition && d.partition_by.empty()) {
    return StageFailed(5733408, "one may not specify the bounds as 'partition' without specifying a non-empty array of partitionByFields");
  }
  return std::unique_ptr<Stage>(std::make_unique<DensifyStage>(std::move(d), SpillPolicy::Of(ctx.options)));
}

StatusOr<std::unique_ptr<Stage>> ParseFill(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(14, "the $fill stage specification must be an object");
  }
  ExpressionPtr partition_by;
  std::vector<std::string> partition_fields;
  SortPattern sort_by;
  Element output;
  bool has_partition = false;
  for (const Element& f : spec.Document()) {
    if (f.key() == "partitionBy") {
      ROCKDOC_ASSIGN_OR_RETURN(partition_by, ParseExpression(f, ctx.scope));
      has_partition = true;
    } else if (f.key() == "partitionByFields") {
      if (has_partition) return StageFailed(6050204, "Maximum one of 'partitionBy' and 'partitionByFields' can be specified in '$fill'");
      ROCKDOC_ASSIGN_OR_RETURN(partition_fields, FieldList("$fill.partitionByFields", f));
    } else if (f.key() == "sortBy") {
      if (f.type() != BsonType::kDocument) return StageFailed(14, "$fill's sortBy must be an object");
      ROCKDOC_ASSIGN_OR_RETURN(sort_by, SortPattern::Parse(f.Document()));
    } else if (f.key() == "output") {
      output = f;
    } else {
      return StageFailed(40415, "BSON field '$fill." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  if (partition_by != nullptr && !partition_fields.empty()) {
    return StageFailed(6050204, "Maximum one of 'partitionBy' and 'partitionByFields' can be specified in '$fill'");
  }
  if (!output.ok() || output.type() != BsonType::kDocument) {
    return StageFailed(40414, "BSON field '$fill.output' is missing but a required field");
  }
  std::vector<FillOutput> outputs;
  for (const Element& f : output.Document()) {
    if (f.type() != BsonType::kDocument) return StageFailed(14, "$fill's output fields must be objects");
    FillOutput o;
    o.field = std::string(f.key());
    Element value = f.Document().Get("value"), method = f.Document().Get("method");
    size_t n = 0;
    for (const Element& x : f.Document()) {
      (void)x;
      ++n;
    }
    if (n != 1 || value.ok() == method.ok()) {
      return StageFailed(6050203, "Exactly one of 'value' and 'method' must be specified in an output field of '$fill'");
    }
    if (value.ok()) {
      ROCKDOC_ASSIGN_OR_RETURN(o.value, ParseExpression(value, ctx.scope));
    } else if (method.type() == BsonType::kString && method.String() == "locf") {
      o.method = FillOutput::kLocf;
    } else if (method.type() == BsonType::kString && method.String() == "linear") {
      o.method = FillOutput::kLinear;
      if (sort_by.size() != 1) {
        return StageFailed(605001, "'$linearFill' requires a sortBy with exactly one field");
      }
    } else {
      return StageFailed(6050202, "Method must be either 'linear' or 'locf'");
    }
    if (o.method != FillOutput::kValue && sort_by.empty()) {
      return StageFailed(6050201, "'sortBy' is required for the 'locf' and 'linear' methods of '$fill'");
    }
    outputs.push_back(std::move(o));
  }
  return std::unique_ptr<Stage>(std::make_unique<FillStage>(std::move(partition_by), std::move(partition_fields),
                                                            std::move(sort_by), std::move(outputs), ctx));
}

}  // namespace

void AddFillStages(StageTable* table) {
  table->emplace("$densify", StageDef{.parse = &ParseDensify});
  table->emplace("$fill", StageDef{.parse = &ParseFill});
}

}  // namespace rockdoc::internal
