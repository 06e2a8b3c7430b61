// Every field MongoDB documents for each command rockdoc answers is either
// applied or refused, never accepted and ignored: the command layer decodes
// each command from a table of the names it knows (command/command.h), and
// this test walks MongoDB's documented fields (MongoDB 7.0's command
// reference pages) through each command. A field the command refuses says
// NotImplemented (238); a field it accepts must be in kApplied, which names
// the test that shows the field's effect (checked to exist); a name that is
// not MongoDB's is the unknown-field error (40415). A documented field the
// command does not know at all (40415) fails the test: the table lacks a row.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

// One command and MongoDB's documented fields for it, each with a value of
// the documented type. "$C" in the texts is the probe's collection; "$ID"
// a live cursor's id on it.
struct CommandFields {
  const char* prefix;  // the command's own field(s), e.g. {"find": "$C"
  const char* db;
  bool needs_collection;  // set up $C with a document and an index {a: 1}
  std::vector<std::pair<const char*, const char*>> fields;
};

const std::vector<CommandFields>& Commands() {
  static const auto* commands = new std::vector<CommandFields>{
      {R"({"find": "$C")", "test", true,
       {{"filter", R"({"a": 1})"}, {"sort", R"({"a": 1})"}, {"projection", R"({"a": 1})"},
        {"hint", R"({"a": 1})"}, {"skip", "1"}, {"limit", "1"}, {"batchSize", "1"},
        {"singleBatch", "true"}, {"comment", R"("x")"}, {"maxTimeMS", "1000"},
        {"readConcern", R"({"level": "majority"})"}, {"max", R"({"a": 5})"},
        {"min", R"({"a": 0})"}, {"returnKey", "true"}, {"showRecordId", "true"},
        {"tailable", "true"}, {"oplogReplay", "true"}, {"noCursorTimeout", "true"},
        {"awaitData", "true"}, {"allowPartialResults", "true"},
        {"collation", R"({"locale": "en"})"}, {"allowDiskUse", "true"},
        {"let", R"({"x": 1})"}}},
      {R"({"getMore": $ID, "collection": "$C")", "test", true,
       {{"batchSize", "1"}, {"maxTimeMS", "1000"}, {"comment", R"("x")"}}},
      {R"({"insert": "$C", "documents": [{"_id": 2}])", "test", true,
       {{"ordered", "false"}, {"maxTimeMS", "1000"}, {"writeConcern", R"({"w": 1})"},
        {"bypassDocumentValidation", "true"}, {"comment", R"("x")"}}},
      {R"({"update": "$C", "updates": [{"q": {"_id": 1}, "u": {"$set": {"b": 1}}}])", "test", true,
       {{"ordered", "false"}, {"maxTimeMS", "1000"}, {"writeConcern", R"({"w": 1})"},
        {"bypassDocumentValidation", "true"}, {"comment", R"("x")"}, {"let", R"({"x": 1})"}}},
      {R"({"update": "$C", "updates": [{"q": {"_id": 1}, "u": {"$set": {"b": 1}})", "test", true,
       {{"c", R"({"x": 1})"}, {"upsert", "true"}, {"multi", "true"},
        {"collation", R"({"locale": "en"})"}, {"arrayFilters", "[]"}, {"hint", R"({"a": 1})"},
        {"sort", R"({"a": 1})"}}},
      {R"({"delete": "$C", "deletes": [{"q": {"_id": 1}, "limit": 1}])", "test", true,
       {{"ordered", "false"}, {"maxTimeMS", "1000"}, {"writeConcern", R"({"w": 1})"},
        {"comment", R"("x")"}, {"let", R"({"x": 1})"}}},
      {R"({"delete": "$C", "deletes": [{"q": {"_id": 1}, "limit": 1)", "test", true,
       {{"collation", R"({"locale": "en"})"}, {"hint", R"({"a": 1})"}}},
      {R"({"findAndModify": "$C", "query": {"_id": 1}, "update": {"$set": {"b": 1}})", "test",
       true,
       {{"sort", R"({"a": 1})"}, {"new", "true"}, {"fields", R"({"a": 1})"}, {"upsert", "true"},
        {"bypassDocumentValidation", "true"}, {"writeConcern", R"({"w": 1})"},
        {"maxTimeMS", "1000"}, {"collation", R"({"locale": "en"})"}, {"arrayFilters", "[]"},
        {"hint", R"({"a": 1})"}, {"comment", R"("x")"}, {"let", R"({"x": 1})"}}},
      {R"({"findAndModify": "$C", "query": {"_id": 1})", "test", true, {{"remove", "true"}}},
      // (pipeline and cursor are required; the batch test shows cursor.batchSize)
      {R"({"aggregate": "$C", "pipeline": [], "cursor": {})", "test", true,
       {{"explain", "true"}, {"allowDiskUse", "true"}, {"maxTimeMS", "1000"},
        {"bypassDocumentValidation", "true"}, {"readConcern", R"({"level": "majority"})"},
        {"collation", R"({"locale": "en"})"}, {"hint", R"({"a": 1})"}, {"comment", R"("x")"},
        {"writeConcern", R"({"w": 1})"}, {"let", R"({"x": 1})"}}},
      {R"({"count": "$C")", "test", true,
       {{"query", R"({"a": 1})"}, {"limit", "1"}, {"skip", "1"}, {"hint", R"({"a": 1})"},
        {"readConcern", R"({"level": "majority"})"}, {"maxTimeMS", "1000"},
        {"collation", R"({"locale": "en"})"}, {"comment", R"("x")"}}},
      {R"({"distinct": "$C", "key": "a")", "test", true,
       {{"query", R"({"a": 1})"}, {"readConcern", R"({"level": "majority"})"},
        {"collation", R"({"locale": "en"})"}, {"comment", R"("x")"}, {"hint", R"({"a": 1})"}}},
      {R"({"create": "$C")", "test", false,
       {{"capped", "true"}, {"timeseries", R"({"timeField": "t"})"},
        {"expireAfterSeconds", "10"}, {"clusteredIndex", R"({"key": {"_id": 1}, "unique": true})"},
        {"changeStreamPreAndPostImages", R"({"enabled": true})"}, {"autoIndexId", "true"},
        {"size", "4096"}, {"max", "10"}, {"storageEngine", "{}"},
        {"validator", R"({"a": 1})"}, {"validationLevel", R"("moderate")"},
        {"validationAction", R"("warn")"}, {"indexOptionDefaults", "{}"},
        {"viewOn", R"("x")"}, {"pipeline", "[]"}, {"collation", R"({"locale": "en"})"},
        {"writeConcern", R"({"w": 1})"}, {"encryptedFields", "{}"}, {"comment", R"("x")"}}},
      {R"({"createIndexes": "$C", "indexes": [{"key": {"b": 1}, "name": "b_1"}])", "test", true,
       {{"writeConcern", R"({"w": 1})"}, {"commitQuorum", R"("majority")"},
        {"comment", R"("x")"}}},
      {R"({"createIndexes": "$C", "indexes": [{"key": {"b": 1}, "name": "b_1")", "test", true,
       {{"unique", "true"}, {"partialFilterExpression", R"({"b": {"$gt": 0}})"},
        {"sparse", "true"}, {"expireAfterSeconds", "10"}, {"hidden", "true"},
        {"storageEngine", "{}"}, {"collation", R"({"locale": "en"})"}, {"weights", "{}"},
        {"default_language", R"("english")"}, {"language_override", R"("lang")"},
        {"textIndexVersion", "3"}, {"2dsphereIndexVersion", "3"}, {"bits", "26"},
        {"min", "-180"}, {"max", "180"}, {"wildcardProjection", R"({"a": 1})"}}},
      {R"({"dropIndexes": "$C", "index": "a_1")", "test", true,
       {{"writeConcern", R"({"w": 1})"}, {"comment", R"("x")"}}},
      {R"({"listIndexes": "$C")", "test", true,
       {{"cursor", R"({"batchSize": 1})"}, {"comment", R"("x")"}}},
      {R"({"listCollections": 1)", "test", true,
       {{"filter", R"({"name": "x"})"}, {"nameOnly", "true"}, {"authorizedCollections", "true"},
        {"comment", R"("x")"}, {"cursor", R"({"batchSize": 1})"}}},
      {R"({"drop": "$C")", "test", true, {{"writeConcern", R"({"w": 1})"}, {"comment", R"("x")"}}},
      {R"({"collMod": "$C")", "test", true,
       {{"validator", R"({"a": 1})"}, {"validationLevel", R"("moderate")"},
        {"validationAction", R"("warn")"},
        {"index", R"({"keyPattern": {"a": 1}, "hidden": true})"},
        {"expireAfterSeconds", "10"}, {"changeStreamPreAndPostImages", R"({"enabled": true})"},
        {"viewOn", R"("x")"}, {"pipeline", "[]"}, {"cappedSize", "4096"}, {"cappedMax", "10"},
        {"comment", R"("x")"}, {"writeConcern", R"({"w": 1})"}}},
      {R"({"renameCollection": "test.$C", "to": "test.$C_renamed")", "admin", true,
       {{"dropTarget", "true"}, {"writeConcern", R"({"w": 1})"}, {"comment", R"("x")"}}},
      {R"({"dbStats": 1)", "test", true, {{"scale", "1024"}, {"freeStorage", "1"}}},
      {R"({"collStats": "$C")", "test", true, {{"scale", "1024"}}},
      {R"({"validate": "$C")", "test", true,
       {{"full", "true"}, {"repair", "true"}, {"metadata", "true"},
        {"checkBSONConformance", "true"}, {"background", "true"}}},
      {R"({"explain": {"find": "$C"})", "test", true,
       {{"verbosity", R"("executionStats")"}, {"comment", R"("x")"}}},
      {R"({"killCursors": "$C", "cursors": [$ID])", "test", true, {{"comment", R"("x")"}}},
      {R"({"listDatabases": 1)", "admin", true,
       {{"filter", R"({"name": "test"})"}, {"nameOnly", "true"},
        {"authorizedDatabases", "true"}, {"comment", R"("x")"}}},
  };
  return *commands;
}

// What each accepted field does, shown. An effect runs `setup` (optional),
// then `command`, then `check` (optional, else the command's reply is
// checked): the reply's JSON must contain `expect` and not `absent`.
// `$C` is a fresh collection holding {_id: 1, a: 1} and {_id: 3, a: 3} with
// an index {a: 1} (none for create); `$ID` a live cursor's id on it.
struct Effect {
  const char* setup;
  const char* command;
  const char* db;
  const char* check;
  const char* expect;
  const char* absent;
};

// Accepted fields whose effect one embedded node does not have (each says
// why), or that another test shows (named).
struct Elsewhere {
  const char* why;
};

const std::map<std::string, Effect>& Effects() {
  static const auto* effects = new std::map<std::string, Effect>{
      {"find.filter",
       {nullptr, R"({"find": "$C", "filter": {"a": 3}})", "test", nullptr,
        R"("firstBatch": [{"_id": 3, "a": 3}])", nullptr}},
      {"find.sort",
       {nullptr, R"({"find": "$C", "sort": {"a": -1}})", "test", nullptr,
        R"([{"_id": 3, "a": 3}, {"_id": 1, "a": 1}])", nullptr}},
      {"find.projection",
       {nullptr, R"({"find": "$C", "projection": {"a": 0}})", "test", nullptr,
        R"([{"_id": 1}, {"_id": 3}])", nullptr}},
      {"find.hint",
       {nullptr, R"({"explain": {"find": "$C", "hint": {"a": 1}}})", "test", nullptr, "IXSCAN",
        nullptr}},
      {"find.skip",
       {nullptr, R"({"find": "$C", "skip": 1})", "test", nullptr,
        R"("firstBatch": [{"_id": 3, "a": 3}])", nullptr}},
      {"find.limit",
       {nullptr, R"({"find": "$C", "limit": 1})", "test", nullptr,
        R"("firstBatch": [{"_id": 1, "a": 1}], "id": 0,)", nullptr}},
      {"find.batchSize",
       {nullptr, R"({"find": "$C", "batchSize": 1})", "test", nullptr,
        R"("firstBatch": [{"_id": 1, "a": 1}])", R"("id": 0,)"}},
      {"find.singleBatch",
       {nullptr, R"({"find": "$C", "batchSize": 1, "singleBatch": true})", "test", nullptr,
        R"("firstBatch": [{"_id": 1, "a": 1}], "id": 0,)", nullptr}},
      {"getMore.batchSize",
       {nullptr, R"({"getMore": $ID, "collection": "$C", "batchSize": 1})", "test", nullptr,
        R"("nextBatch": [{"_id": 1, "a": 1}])", R"("id": 0,)"}},
      {"insert.ordered",
       {nullptr, R"({"insert": "$C", "documents": [{"_id": 1}, {"_id": 2}], "ordered": false})",
        "test", nullptr, R"("n": 1,)", nullptr}},
      {"update.ordered",
       {nullptr, R"({"update": "$C", "ordered": false, "updates": [
            {"q": {"_id": 1}, "u": {"$set": {"_id": 9}}}, {"q": {"_id": 3}, "u": {"$set": {"b": 1}}}]})",
        "test", nullptr, R"("n": 1, "nModified": 1,)", nullptr}},
      {"update.upsert",
       {nullptr,
        R"({"update": "$C", "updates": [{"q": {"_id": 5}, "u": {"$set": {"b": 1}}, "upsert": true}]})",
        "test", nullptr, R"("upserted": [{"index": 0, "_id": 5}])", nullptr}},
      {"update.multi",
       {nullptr,
        R"({"update": "$C", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "multi": true}]})",
        "test", nullptr, R"("nModified": 2)", nullptr}},
      {"update.arrayFilters",
       {R"({"update": "$C", "updates": [{"q": {"_id": 1}, "u": {"$set": {"arr": [1, 2, 3]}}}]})",
        R"({"update": "$C", "updates": [{"q": {"_id": 1}, "u": {"$set": {"arr.$[x]": 0}},
            "arrayFilters": [{"x": {"$gt": 1}}]}]})",
        "test", R"({"find": "$C", "filter": {"_id": 1}})", R"("arr": [1, 0, 0])", nullptr}},
      {"update.hint",
       {nullptr,
        R"({"update": "$C", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "hint": {"zz": 1}}]})",
        "test", nullptr, R"("code": 2,)", nullptr}},
      {"update.sort",
       {nullptr,
        R"({"update": "$C", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "sort": {"a": -1}}]})",
        "test", R"({"find": "$C", "filter": {"b": 1}})", R"([{"_id": 3, "a": 3, "b": 1}])",
        nullptr}},
      {"delete.ordered",
       {nullptr, R"({"delete": "$C", "ordered": false, "deletes": [
            {"q": {"$bad": 1}, "limit": 0}, {"q": {"_id": 1}, "limit": 1}]})",
        "test", nullptr, R"("n": 1,)", nullptr}},
      {"findAndModify.sort",
       {nullptr, R"({"findAndModify": "$C", "query": {}, "sort": {"a": -1}, "remove": true})",
        "test", nullptr, R"("value": {"_id": 3, "a": 3})", nullptr}},
      {"findAndModify.new",
       {nullptr,
        R"({"findAndModify": "$C", "query": {"_id": 1}, "update": {"$set": {"b": 1}}, "new": true})",
        "test", nullptr, R"("value": {"_id": 1, "a": 1, "b": 1})", nullptr}},
      {"findAndModify.fields",
       {nullptr,
        R"({"findAndModify": "$C", "query": {"_id": 1}, "remove": true, "fields": {"a": 0}})",
        "test", nullptr, R"("value": {"_id": 1})", nullptr}},
      {"findAndModify.upsert",
       {nullptr,
        R"({"findAndModify": "$C", "query": {"_id": 7}, "update": {"$set": {"b": 1}}, "upsert": true})",
        "test", nullptr, R"("upserted": 7)", nullptr}},
      {"findAndModify.arrayFilters",
       {R"({"update": "$C", "updates": [{"q": {"_id": 1}, "u": {"$set": {"arr": [1, 2, 3]}}}]})",
        R"({"findAndModify": "$C", "query": {"_id": 1}, "update": {"$set": {"arr.$[x]": 0}},
            "arrayFilters": [{"x": {"$gt": 1}}], "new": true})",
        "test", nullptr, R"("arr": [1, 0, 0])", nullptr}},
      {"findAndModify.remove",
       {nullptr, R"({"findAndModify": "$C", "query": {"_id": 1}, "remove": true})", "test",
        R"({"count": "$C"})", R"("n": 1,)", nullptr}},
      {"aggregate.explain",
       {nullptr, R"({"aggregate": "$C", "pipeline": [{"$group": {"_id": 1}}],
                              "explain": true})",
        "test", nullptr, R"("stages": [{"$cursor": )", "firstBatch"}},
      {"delete.hint",
       {nullptr, R"({"delete": "$C", "deletes": [{"q": {}, "limit": 0, "hint": {"zz": 1}}]})",
        "test", nullptr, R"("code": 2,)", nullptr}},
      {"findAndModify.hint",
       {nullptr,
        R"({"findAndModify": "$C", "query": {"_id": 1}, "remove": true, "hint": {"zz": 1}})",
        "test", nullptr, R"("code": 2,)", nullptr}},
      {"find.let",
       {nullptr, R"({"find": "$C", "filter": {"$expr": {"$eq": ["$a", "$$v"]}}, "let": {"v": 3}})",
        "test", nullptr, R"("firstBatch": [{"_id": 3, "a": 3}])", nullptr}},
      {"aggregate.hint",
       {nullptr, R"({"aggregate": "$C", "pipeline": [], "cursor": {}, "hint": {"zz": 1}})", "test",
        nullptr, R"("code": 2,)", nullptr}},
      {"count.query",
       {nullptr, R"({"count": "$C", "query": {"a": 3}})", "test", nullptr, R"("n": 1,)", nullptr}},
      {"count.limit",
       {nullptr, R"({"count": "$C", "limit": 1})", "test", nullptr, R"("n": 1,)", nullptr}},
      {"count.skip",
       {nullptr, R"({"count": "$C", "skip": 1})", "test", nullptr, R"("n": 1,)", nullptr}},
      {"count.hint",
       {nullptr, R"({"count": "$C", "hint": {"zz": 1}})", "test", nullptr, R"("code": 2,)",
        nullptr}},
      {"distinct.query",
       {nullptr, R"({"distinct": "$C", "key": "a", "query": {"a": 3}})", "test", nullptr,
        R"("values": [3])", nullptr}},
      {"create.capped",
       {nullptr, R"({"create": "$C", "capped": true, "size": 4096})", "test",
        R"({"collStats": "$C"})", R"("capped": true)", nullptr}},
      {"create.size",
       {nullptr, R"({"create": "$C", "capped": true, "size": 5000})", "test",
        R"({"collStats": "$C"})", R"("maxSize": 5120)", nullptr}},
      {"create.max",
       {R"({"create": "$C", "capped": true, "size": 4096, "max": 1})",
        R"({"insert": "$C", "documents": [{"_id": 1}, {"_id": 2}]})", "test", R"({"find": "$C"})",
        R"("firstBatch": [{"_id": 2}])", nullptr}},
      {"create.validator",
       {nullptr, R"({"create": "$C", "validator": {"a": {"$type": "int"}}})", "test",
        R"({"insert": "$C", "documents": [{"a": "x"}]})", R"("code": 121,)", nullptr}},
      {"create.validationLevel",
       {R"({"create": "$C", "validator": {"a": 1}, "validationLevel": "off"})",
        R"({"insert": "$C", "documents": [{"a": 2}]})", "test", nullptr, R"("n": 1,)",
        "writeErrors"}},
      {"create.validationAction",
       {R"({"create": "$C", "validator": {"a": 1}, "validationAction": "warn"})",
        R"({"insert": "$C", "documents": [{"a": 2}]})", "test", nullptr, R"("n": 1,)",
        "writeErrors"}},
      {"create.changeStreamPreAndPostImages",
       {nullptr, R"({"create": "$C", "changeStreamPreAndPostImages": {"enabled": true}})", "test",
        R"({"listCollections": 1, "filter": {"name": "$C"}})",
        R"("options": {"changeStreamPreAndPostImages": {"enabled": true}})", nullptr}},
      {"create.viewOn",
       {nullptr, R"({"create": "$C", "viewOn": "$C_src"})", "test",
        R"({"listCollections": 1, "filter": {"name": "$C"}})", R"("type": "view")", nullptr}},
      {"create.pipeline",
       {R"({"insert": "$C_src", "documents": [{"_id": 1}]})",
        R"({"create": "$C", "viewOn": "$C_src", "pipeline": [{"$set": {"z": 7}}]})", "test",
        R"({"find": "$C"})", R"("firstBatch": [{"_id": 1, "z": 7}])", nullptr}},
      {"createIndexes.unique",
       {R"({"createIndexes": "$C", "indexes": [{"key": {"a": -1}, "name": "u", "unique": true}]})",
        R"({"insert": "$C", "documents": [{"_id": 10, "a": 1}]})", "test", nullptr,
        R"("code": 11000,)", nullptr}},
      {"createIndexes.partialFilterExpression",
       {R"({"createIndexes": "$C", "indexes": [{"key": {"a": -1}, "name": "u", "unique": true,
            "partialFilterExpression": {"a": {"$gt": 2}}}]})",
        R"({"insert": "$C", "documents": [{"_id": 10, "a": 1}]})", "test", nullptr, R"("n": 1,)",
        "writeErrors"}},
      {"createIndexes.sparse",
       {nullptr, R"({"createIndexes": "$C", "indexes": [{"key": {"b": 1}, "name": "b_1",
            "unique": true, "sparse": true}]})",
        "test", nullptr, R"("numIndexesAfter": 3)", nullptr}},
      {"createIndexes.hidden",
       {nullptr, R"({"createIndexes": "$C", "indexes": [{"key": {"h": 1}, "name": "h_1",
            "hidden": true}]})",
        "test", R"({"explain": {"find": "$C", "filter": {"h": 1}}})", "COLLSCAN", "IXSCAN"}},
      {"createIndexes.expireAfterSeconds",
       {nullptr, R"({"createIndexes": "$C", "indexes": [{"key": {"t": 1}, "name": "t_1",
            "expireAfterSeconds": 10}]})",
        "test", R"({"listIndexes": "$C"})", R"("expireAfterSeconds": 10)", nullptr}},
      {"listIndexes.cursor",
       {nullptr, R"({"listIndexes": "$C", "cursor": {"batchSize": 1}})", "test", nullptr,
        R"("name": "_id_"}])", R"("id": 0,)"}},
      {"listCollections.filter",
       {nullptr, R"({"listCollections": 1, "filter": {"name": "$C"}})", "test", nullptr,
        R"("firstBatch": [{"name": "$C", )", nullptr}},
      {"listCollections.nameOnly",
       {nullptr, R"({"listCollections": 1, "nameOnly": true, "filter": {"name": "$C"}})", "test",
        nullptr, R"("firstBatch": [{"name": "$C", "type": "collection"}])", nullptr}},
      {"listCollections.cursor",
       {R"({"insert": "$C_2", "documents": [{}]})",
        R"({"listCollections": 1, "cursor": {"batchSize": 1}})", "test", nullptr, "firstBatch",
        R"("id": 0,)"}},
      {"collMod.index",
       {nullptr, R"({"collMod": "$C", "index": {"keyPattern": {"a": 1}, "hidden": true}})", "test",
        R"({"explain": {"find": "$C", "filter": {"a": 1}}})", "COLLSCAN", "IXSCAN"}},
      {"collMod.validator",
       {nullptr, R"({"collMod": "$C", "validator": {"a": {"$type": "string"}}})", "test",
        R"({"insert": "$C", "documents": [{"a": 1}]})", R"("code": 121,)", nullptr}},
      {"collMod.changeStreamPreAndPostImages",
       {nullptr, R"({"collMod": "$C", "changeStreamPreAndPostImages": {"enabled": true}})", "test",
        R"({"listCollections": 1, "filter": {"name": "$C"}})",
        R"("options": {"changeStreamPreAndPostImages": {"enabled": true}})", nullptr}},
      {"collMod.validationLevel",
       {R"({"collMod": "$C", "validator": {"a": 1}, "validationLevel": "off"})",
        R"({"insert": "$C", "documents": [{"a": 2}]})", "test", nullptr, R"("n": 1,)",
        "writeErrors"}},
      {"collMod.validationAction",
       {R"({"collMod": "$C", "validator": {"a": 1}, "validationAction": "warn"})",
        R"({"insert": "$C", "documents": [{"a": 2}]})", "test", nullptr, R"("n": 1,)",
        "writeErrors"}},
      {"collMod.viewOn",
       {R"({"create": "$C_v", "viewOn": "nothing", "pipeline": []})",
        R"({"collMod": "$C_v", "viewOn": "$C", "pipeline": []})", "test", R"({"find": "$C_v"})",
        R"("firstBatch": [{"_id": )", nullptr}},
      {"collMod.pipeline",
       {R"({"create": "$C_v", "viewOn": "$C", "pipeline": []})",
        R"({"collMod": "$C_v", "viewOn": "$C", "pipeline": [{"$set": {"z": 8}}]})", "test",
        R"({"find": "$C_v"})", R"("z": 8})", nullptr}},
      {"renameCollection.dropTarget",
       {R"({"insert": "$C_renamed", "documents": [{}]})",
        R"({"renameCollection": "test.$C", "to": "test.$C_renamed", "dropTarget": true})", "admin",
        R"({"count": "$C_renamed"})", R"("n": 2,)", nullptr}},
      {"dbStats.scale",
       {nullptr, R"({"dbStats": 1, "scale": 1024})", "test", nullptr, R"("scaleFactor": 1024)",
        nullptr}},
      {"dbStats.freeStorage",
       {nullptr, R"({"dbStats": 1, "freeStorage": 1})", "test", nullptr, R"("freeStorageSize": 0)",
        nullptr}},
      {"collStats.scale",
       {nullptr, R"({"collStats": "$C", "scale": 1024})", "test", nullptr, R"("scaleFactor": 1024)",
        nullptr}},
      {"explain.verbosity",
       {nullptr, R"({"explain": {"find": "$C"}, "verbosity": "executionStats"})", "test", nullptr,
        R"("executionStats")", nullptr}},
      {"listDatabases.filter",
       {nullptr, R"({"listDatabases": 1, "filter": {"name": "test"}})", "admin", nullptr,
        R"("databases": [{"name": "test")", nullptr}},
      {"listDatabases.nameOnly",
       {nullptr, R"({"listDatabases": 1, "nameOnly": true})", "admin", nullptr,
        R"("databases": [{"name": )", "sizeOnDisk"}},
  };
  return *effects;
}

const std::map<std::string, Elsewhere>& ShownElsewhere() {
  static constexpr char kComment[] =
      "comment: MongoDB attaches it to logs, the profiler and currentOp: rockdoc's profiler "
      "entries and currentOp's command carry it (the command as it came)";
  static constexpr char kWriteConcern[] =
      "writeConcern w: 1 / 'majority': one node acknowledges both once committed "
      "(GenericFieldsAreDecodedNotIgnored: w: 2 is refused); j: true syncs the log before the "
      "reply (PowerLossTest.JournaledWritesSurvivePowerLoss)";
  static constexpr char kReadConcern[] =
      "readConcern local / available / majority: one node reads its committed data "
      "(GenericFieldsAreDecodedNotIgnored: linearizable is refused); snapshot: "
      "CommandTest.SnapshotReadsOfASessionSeeOnePointInTime";
  static constexpr char kMaxTime[] =
      "maxTimeMS: ShellTest.MaxTimeMSReachesEveryOperation (through these commands) and "
      "MaxTimeTest.*";
  static constexpr char kBypass[] = "ValidatorTest.CommandsReportErrInfoAndHonourBypass";
  static constexpr char kProfiled[] =
      "comment: kept in the profile entry (QueryStatsTest.ProfileEntriesKeepTheCommandsComment)";
  static constexpr char kLet[] = "CommandTest.LetBindsVariablesForFiltersAndUpdatePipelines";
  static const auto* elsewhere = new std::map<std::string, Elsewhere>{
      {"find.comment", {kProfiled}},
      {"createIndexes.2dsphereIndexVersion", {"GeoTest.CommandsCreateFindAndAggregate"}},
      {"find.collation", {"CollationCommandTest.FindFiltersAndSortsWithTheCollation"}},
      {"aggregate.collation", {"CollationCommandTest.AggregateTakesTheCollationInItsFind"}},
      {"update.collation", {"CollationCommandTest.CountDistinctUpdateDeleteFindAndModify"}},
      {"delete.collation", {"CollationCommandTest.CountDistinctUpdateDeleteFindAndModify"}},
      {"findAndModify.collation", {"CollationCommandTest.CountDistinctUpdateDeleteFindAndModify"}},
      {"count.collation", {"CollationCommandTest.CountDistinctUpdateDeleteFindAndModify"}},
      {"distinct.collation", {"CollationCommandTest.CountDistinctUpdateDeleteFindAndModify"}},
      {"create.collation", {"CollationCommandTest.CollectionDefaultAppliesAndIsListed"}},
      {"createIndexes.collation", {"CollationCommandTest.UniqueIndexAtStrengthTwoRefusesCaseVariants"}},
      {"find.readConcern", {kReadConcern}},
      {"find.maxTimeMS", {kMaxTime}},
      {"find.noCursorTimeout", {"CursorManagerTest.IdleCursorsAreClosed"}},
      {"find.allowPartialResults", {"about shards that do not answer; one node always answers"}},
      {"find.min", {"FindExtTest.MinMaxScanOnlyTheHintedIndexsKeyRange"}},
      {"find.max", {"FindExtTest.MinMaxScanOnlyTheHintedIndexsKeyRange"}},
      {"find.returnKey", {"FindExtTest.ReturnKeyReturnsTheIndexKeyOfEachResult"}},
      {"find.showRecordId", {"FindExtTest.ShowRecordIdIsStablePerDocument"}},
      {"find.tailable", {"FindExtTest.TailableCursorStaysOpenAndReturnsLaterInserts"}},
      {"find.awaitData", {"FindExtTest.AwaitDataGetMoreReturnsTheDocumentAnotherThreadInserts"}},
      {"getMore.maxTimeMS", {"FindExtTest.AwaitDataGetMoreReturnsTheDocumentAnotherThreadInserts"}},
      {"getMore.comment", {kComment}},
      {"insert.writeConcern", {kWriteConcern}},
      {"insert.bypassDocumentValidation", {kBypass}},
      {"insert.comment", {kComment}},
      {"insert.maxTimeMS", {"MaxTimeTest.InsertManyStopsBetweenDocumentsAndInsertCommandFails"}},
      {"update.maxTimeMS", {kMaxTime}},
      {"update.writeConcern", {kWriteConcern}},
      {"update.bypassDocumentValidation", {kBypass}},
      {"update.comment", {kComment}},
      {"update.let", {kLet}},
      {"delete.maxTimeMS", {kMaxTime}},
      {"delete.writeConcern", {kWriteConcern}},
      {"delete.comment", {kComment}},
      {"delete.let", {kLet}},
      {"findAndModify.bypassDocumentValidation", {kBypass}},
      {"findAndModify.writeConcern", {kWriteConcern}},
      {"findAndModify.maxTimeMS", {kMaxTime}},
      {"findAndModify.comment", {kComment}},
      {"findAndModify.let", {kLet}},
      {"aggregate.maxTimeMS", {"MaxTimeTest.AggregateHasOneDeadlineForAllItsFinds"}},
      {"aggregate.let", {"PipelineTest.DocumentsAndLet and ShellTest.DatabaseAggregate"}},
      {"aggregate.allowDiskUse", {"SpillTest.* (spilled $sort and $group answer as in memory) and SpillApiTest.AllowDiskUseThroughTheApiAndTheCommand"}},
      {"aggregate.readConcern", {kReadConcern}},
      {"aggregate.writeConcern", {kWriteConcern}},
      {"aggregate.comment", {kProfiled}},
      {"count.readConcern", {kReadConcern}},
      {"count.maxTimeMS", {kMaxTime}},
      {"count.comment", {kProfiled}},
      {"distinct.readConcern", {kReadConcern}},
      {"distinct.comment", {kProfiled}},
      {"create.writeConcern", {kWriteConcern}},
      {"create.comment", {kComment}},
      {"createIndexes.writeConcern", {kWriteConcern}},
      // On a text index; on {b: 1} they are refused (197): text_index_test.cc.
      {"createIndexes.weights", {"TextIndexTest.WeightsWildcardAndLanguageOverride"}},
      {"createIndexes.default_language", {"TextIndexTest.ListIndexesShowsMongoDBsShape"}},
      {"createIndexes.language_override", {"TextIndexTest.WeightsWildcardAndLanguageOverride"}},
      {"createIndexes.textIndexVersion", {"TextIndexTest.RefusalsCarryMongoDBsCodes"}},
      {"createIndexes.comment", {kComment}},
      {"dropIndexes.writeConcern", {kWriteConcern}},
      {"dropIndexes.comment", {kComment}},
      {"listIndexes.comment", {kComment}},
      {"listCollections.authorizedCollections", {"about users' privileges; rockdoc has no users"}},
      {"listCollections.comment", {kComment}},
      {"drop.writeConcern", {kWriteConcern}},
      {"drop.comment", {kComment}},
      {"collMod.cappedSize", {"CappedTest.CollModChangesTheLimitsFromTheNextInsert"}},
      {"collMod.cappedMax", {"CappedTest.CollModChangesTheLimitsFromTheNextInsert"}},
      {"collMod.comment", {kComment}},
      {"collMod.writeConcern", {kWriteConcern}},
      {"renameCollection.writeConcern", {kWriteConcern}},
      {"renameCollection.comment", {kComment}},
      {"validate.full", {"rockdoc's validate always reads every record and index entry"}},
      {"explain.comment", {kComment}},
      {"killCursors.comment", {kComment}},
      {"listDatabases.authorizedDatabases", {"about users' privileges; rockdoc has no users"}},
      {"listDatabases.comment", {kComment}},
  };
  return *elsewhere;
}

class CommandFieldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  static std::string Replace(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return text;
  }
  // A fresh collection name, set up (two documents, an index {a: 1})
  // unless `empty`.
  std::string NewCollection(bool empty) {
    const std::string coll = "p" + std::to_string(++probes_);
    if (empty) return coll;
    Document r = client_->RunCommand(
        "test", Json(R"({"insert": ")" + coll +
                     R"(", "documents": [{"_id": 1, "a": 1}, {"_id": 3, "a": 3}]})"));
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    r = client_->RunCommand("test", Json(R"({"createIndexes": ")" + coll +
                                         R"(", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})"));
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    return coll;
  }
  // `text` with $C the collection and $ID a live cursor's id on it.
  std::string Fill(const std::string& text, const std::string& coll) {
    std::string out = Replace(text, "$C", coll);
    if (out.find("$ID") != std::string::npos) {
      Document r = client_->RunCommand("test", Json(R"({"find": ")" + coll + R"(", "batchSize": 0})"));
      out = Replace(out, "$ID",
                    "{\"$numberLong\": \"" +
                        std::to_string(r.Get("cursor").Document().Get("id").Int64()) + "\"}");
    }
    return out;
  }
  // The code `reply` answers with (0: ok); a statement's field is decoded
  // with the statement, so its error is the statement's write error.
  static int CodeOf(const Document& reply) {
    if (reply.Get("ok").NumberAsDouble() != 1) return reply.Get("code").Int32();
    if (Element errors = reply.Get("writeErrors"); errors.type() == BsonType::kArray) {
      for (Element e : errors.Array()) return e.Document().Get("code").Int32();
    }
    return 0;
  }
  // The code the command answers with `field: value` added.
  int Probe(const CommandFields& c, const std::string& field, const std::string& value) {
    const std::string coll = NewCollection(!c.needs_collection);
    std::string text = Fill(c.prefix, coll) + ", \"" + field + "\": " + value;
    // A prefix may end inside a nested document (a statement, an index
    // specification): close whatever is open, innermost first.
    std::vector<char> stack;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char ch = text[i];
      if (in_string) {
        if (ch == '\\') {
          ++i;
        } else if (ch == '"') {
          in_string = false;
        }
        continue;
      }
      if (ch == '"') {
        in_string = true;
      } else if (ch == '{' || ch == '[') {
        stack.push_back(ch);
      } else if (ch == '}' || ch == ']') {
        stack.pop_back();
      }
    }
    while (!stack.empty()) {
      text += stack.back() == '{' ? '}' : ']';
      stack.pop_back();
    }
    Document reply = client_->RunCommand(c.db, Json(text));
    last_ = text + " -> " + ToJson(reply);
    return CodeOf(reply);
  }

  ScratchDir dir_;
  std::unique_ptr<Client> client_;
  int probes_ = 0;
  std::string last_;
};

// The command name of a prefix: {"find": ... -> find.
std::string CommandName(const char* prefix) {
  std::string p = prefix;
  return p.substr(2, p.find('"', 2) - 2);
}

TEST_F(CommandFieldsTest, EveryDocumentedFieldIsAppliedOrRefused) {
  std::set<std::string> accepted;
  int refused = 0;
  for (const CommandFields& c : Commands()) {
    for (const auto& [field, value] : c.fields) {
      const int code = Probe(c, field, value);
      const std::string name = CommandName(c.prefix) + "." + field;
      EXPECT_NE(code, 40415) << name << " has no row in the command's table: " << last_;
      if (code == 238) {
        ++refused;
        continue;
      }
      accepted.insert(name);
      EXPECT_TRUE(Effects().count(name) + ShownElsewhere().count(name) == 1)
          << name << " is accepted: its effect must be shown here (Effects) or named "
          << "(ShownElsewhere): " << last_;
    }
  }
  // Every entry is a field the command accepts (a stale one fails).
  for (const auto& [name, effect] : Effects()) EXPECT_TRUE(accepted.count(name)) << name;
  for (const auto& [name, why] : ShownElsewhere()) EXPECT_TRUE(accepted.count(name)) << name;
  EXPECT_GT(refused, 20);  // timeseries, storageEngine, ... (the walk is not empty)
}

TEST_F(CommandFieldsTest, EachAcceptedFieldHasItsEffect) {
  for (const auto& [name, e] : Effects()) {
    SCOPED_TRACE(name);
    const bool create = name.starts_with("create.");
    const std::string coll = NewCollection(create);
    if (e.setup != nullptr) {
      Document r = client_->RunCommand("test", Json(Fill(e.setup, coll)));
      ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    }
    Document reply = client_->RunCommand(e.db, Json(Fill(e.command, coll)));
    if (e.check != nullptr) {
      ASSERT_EQ(reply.Get("ok").NumberAsDouble(), 1) << ToJson(reply);
      reply = client_->RunCommand("test", Json(Fill(e.check, coll)));
    }
    const std::string json = ToJson(reply);
    EXPECT_NE(json.find(Replace(e.expect, "$C", coll)), std::string::npos) << json;
    if (e.absent != nullptr) EXPECT_EQ(json.find(e.absent), std::string::npos) << json;
  }
}

// The fields accepted for having no effect on one node are still decoded:
// a value one node cannot honour is refused, on every command taking them.
TEST_F(CommandFieldsTest, GenericFieldsAreDecodedNotIgnored) {
  for (const CommandFields& c : Commands()) {
    for (const auto& [field, value] : c.fields) {
      const std::string f = field;
      if (f == "writeConcern") {
        EXPECT_EQ(Probe(c, "writeConcern", R"({"w": 2})"), 238) << last_;
        EXPECT_EQ(Probe(c, "writeConcern", R"({"w": 1, "j": "yes"})"), 14) << last_;
        EXPECT_EQ(Probe(c, "writeConcern", R"({"w": 1, "x": 1})"), 40415) << last_;
      } else if (f == "readConcern") {
        EXPECT_EQ(Probe(c, "readConcern", R"({"level": "linearizable"})"), 238) << last_;
        EXPECT_EQ(Probe(c, "readConcern", R"({"level": "bogus"})"), 9) << last_;
      } else if (f == "maxTimeMS" && Probe(c, "maxTimeMS", "1000") == 0) {
        // BadValue, or the IDL's 51024 where MongoDB's IDL checks the range.
        const int code = Probe(c, "maxTimeMS", "-1");
        EXPECT_TRUE(code == 2 || code == 51024) << last_;
      }
    }
    // And a name that is not MongoDB's is its unknown-field error (in an
    // index specification, InvalidIndexSpecificationOption, as MongoDB).
    const bool index_spec = std::string(c.prefix).ends_with(R"("name": "b_1")");
    EXPECT_EQ(Probe(c, "notAField", "1"), index_spec ? 197 : 40415) << last_;
  }
}

}  // namespace
}  // namespace rockdoc
