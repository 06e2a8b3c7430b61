// pipeline/vector_search_stage.cc: the search-index stages that open a
// collection's pipeline in place of its find: $vectorSearch (Atlas Vector
// Search's stage, over a vectorSearch index: index/vector_search.h) and
// $listSearchIndexes (what drivers' listSearchIndexes run). Each takes its
// documents from a PipelineOptions source that api/ supplies; anywhere but
// first each is 40602, as the other source stages.
//
// $vectorSearch's fields, as Atlas documents them
// (https://www.mongodb.com/docs/atlas/atlas-vector-search/vector-search-stage/):
//   index (string), path (string), queryVector (array of numbers),
//   numCandidates (1..10000, at least limit; required unless exact),
//   limit (positive), filter (object: MQL on the index's filter fields),
//   exact (bool: ENN, a scan of every vector; numCandidates then omitted).
// A missing required field is 40414, a mistyped one 14, an unknown one
// 40415 (mongod's IDL errors for the stage); an out-of-range value is
// BadValue (2). `query` (automated embedding) is NotImplemented.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/option_table.h"
#include "index/vector_search.h"
#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

Status WrongType(std::string_view field, const Element& e, std::string_view expected) {
  return StageFailed(14, "BSON field '$vectorSearch." + std::string(field) +
                             "' is the wrong type '" + std::string(BsonTypeAlias(e.type())) +
                             "', expected type '" + std::string(expected) + "'");
}

struct Decoded {
  VectorSearchRequest request;
  bool has_index = false, has_path = false, has_vector = false, has_limit = false;
  bool has_candidates = false;
};

Status DecodeString(const Element& e, std::string_view field, std::string* out) {
  if (e.type() != BsonType::kString) return WrongType(field, e, "string");
  *out = std::string(e.String());
  return Status::OK();
}

// An integral number (as IDL's safeInt64 takes it).
Status DecodeCount(const Element& e, std::string_view field, int64_t* out) {
  if (!e.IsNumber()) return WrongType(field, e, "int");
  const double d = e.NumberAsDouble();
  if (d != std::floor(d) || std::abs(d) > 9.0e15) {
    return StageFailed(2, "$vectorSearch." + std::string(field) + " must be an integer");
  }
  *out = static_cast<int64_t>(d);
  return Status::OK();
}

constexpr OptionField<Decoded> kVectorSearchFields[] = {
    {"index",
     [](const Element& e, Decoded* d) {
       d->has_index = true;
       return DecodeString(e, "index", &d->request.index);
     }},
    {"path",
     [](const Element& e, Decoded* d) {
       d->has_path = true;
       return DecodeString(e, "path", &d->request.path);
     }},
    {"queryVector",
     [](const Element& e, Decoded* d) {
       d->has_vector = true;
       if (e.type() == BsonType::kBinary) {
         return Status(ErrorCode::kNotImplemented,
                       "$vectorSearch.queryVector as BinData vector is not supported by rockdoc");
       }
       if (e.type() != BsonType::kArray) return WrongType("queryVector", e, "array");
       for (Element x : e.Array()) {
         if (!x.IsNumber()) {
           return StageFailed(14, "$vectorSearch.queryVector must hold numbers only, found " +
                                      std::string(BsonTypeAlias(x.type())));
         }
         if (static_cast<int64_t>(d->request.query_vector.size()) == kMaxVectorDimensions) {
           return StageFailed(2, "$vectorSearch.queryVector has more than 8192 dimensions");
         }
         const double v = x.NumberAsDouble();
         if (!std::isfinite(v)) {
           return StageFailed(2, "$vectorSearch.queryVector values must be finite");
         }
         d->request.query_vector.push_back(static_cast<float>(v));
       }
       return Status::OK();
     }},
    {"numCandidates",
     [](const Element& e, Decoded* d) {
       d->has_candidates = true;
       return DecodeCount(e, "numCandidates", &d->request.num_candidates);
     }},
    {"limit",
     [](const Element& e, Decoded* d) {
       d->has_limit = true;
       return DecodeCount(e, "limit", &d->request.limit);
     }},
    {"filter",
     [](const Element& e, Decoded* d) {
       if (e.type() != BsonType::kDocument) return WrongType("filter", e, "object");
       d->request.filter = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"exact",
     [](const Element& e, Decoded* d) {
       if (e.type() != BsonType::kBool) return WrongType("exact", e, "bool");
       d->request.exact = e.Bool();
       return Status::OK();
     }},
    {"query", nullptr},  // automated embedding: needs an embedding model
};

StatusOr<VectorSearchRequest> DecodeVectorSearch(const Element& stage) {
  if (stage.type() != BsonType::kDocument) {
    return StageFailed(14, "$vectorSearch must take an object, found " +
                               std::string(BsonTypeAlias(stage.type())));
  }
  Decoded d;
  ROCKDOC_RETURN_IF_ERROR(DecodeValidatedOptions(
      stage.Document(), kVectorSearchFields, &d,
      [](std::string_view name) {
        return StageFailed(40415, "BSON field '$vectorSearch." + std::string(name) +
                                      "' is an unknown field.");
      },
      [](std::string_view name) {
        return Status(ErrorCode::kNotImplemented,
                      "$vectorSearch." + std::string(name) + " is not supported by rockdoc");
      }));
  auto missing = [](std::string_view field) {
    return StageFailed(40414, "BSON field '$vectorSearch." + std::string(field) +
                                  "' is missing but a required field");
  };
  if (!d.has_index) return missing("index");
  if (!d.has_path) return missing("path");
  if (!d.has_vector) return missing("queryVector");
  if (!d.has_limit) return missing("limit");
  VectorSearchRequest& r = d.request;
  if (r.query_vector.empty()) return StageFailed(2, "$vectorSearch.queryVector must not be empty");
  if (r.limit < 1) return StageFailed(2, "$vectorSearch.limit must be a positive integer");
  if (r.exact) {
    if (d.has_candidates) {
      return StageFailed(2, "$vectorSearch.numCandidates is not allowed when exact is true");
    }
  } else {
    if (!d.has_candidates) return missing("numCandidates");
    if (r.num_candidates > kMaxNumCandidates) {
      return StageFailed(2, "$vectorSearch.numCandidates must be less than or equal to 10000");
    }
    if (r.num_candidates < r.limit) {
      return StageFailed(2, "$vectorSearch.numCandidates must be greater than or equal to limit");
    }
  }
  return r;
}

StatusOr<std::vector<Document>> VectorSearchDocuments(std::string_view collection,
                                                      const Element& stage,
                                                      const PipelineOptions& options) {
  ROCKDOC_ASSIGN_OR_RETURN(VectorSearchRequest request, DecodeVectorSearch(stage));
  if (!options.vector_search) {
    return Status(ErrorCode::kNotImplemented, "$vectorSearch is not supported here");
  }
  return options.vector_search(collection, request);
}

// {$listSearchIndexes: {}} or {$listSearchIndexes: {name}} (or {id}, the
// id listSearchIndexes gives).
StatusOr<std::vector<Document>> ListSearchIndexDocuments(std::string_view collection,
                                                         const Element& stage,
                                                         const PipelineOptions& options) {
  if (stage.type() != BsonType::kDocument) {
    return StageFailed(14, "$listSearchIndexes must take an object, found " +
                               std::string(BsonTypeAlias(stage.type())));
  }
  std::optional<std::string> name, id;
  for (Element f : stage.Document()) {
    if (f.key() != "name" && f.key() != "id") {
      return StageFailed(40415, "BSON field '$listSearchIndexes." + std::string(f.key()) +
                                    "' is an unknown field.");
    }
    if (f.type() != BsonType::kString) {
      return StageFailed(14, "BSON field '$listSearchIndexes." + std::string(f.key()) +
                                 "' is the wrong type '" + std::string(BsonTypeAlias(f.type())) +
                                 "', expected type 'string'");
    }
    (f.key() == "name" ? name : id) = std::string(f.String());
  }
  if (name && id) {
    return StageFailed(2, "Cannot set both 'name' and 'id' in $listSearchIndexes");
  }
  if (!options.list_search_indexes) {
    return Status(ErrorCode::kNotImplemented, "$listSearchIndexes is not supported here");
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> all,
                           options.list_search_indexes(collection, name));
  if (!id) return all;
  std::vector<Document> out;
  for (Document& d : all) {
    Element e = d.Get("id");
    if (e.type() == BsonType::kString && e.String() == *id) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

void AddVectorSearchStages(StageTable* table) {
  table->emplace("$vectorSearch",
                 StageDef{.place = StagePlace::kFirst, .source = &VectorSearchDocuments});
  table->emplace("$listSearchIndexes",
                 StageDef{.place = StagePlace::kFirst, .source = &ListSearchIndexDocuments});
}

}  // namespace rockdoc::internal
