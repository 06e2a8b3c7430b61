// The shell's search index helpers (mongosh's names: createSearchIndex,
// getSearchIndexes, updateSearchIndex, dropSearchIndex) and $vectorSearch
// through db.c.aggregate, driven in-process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;

TEST_F(ShellTest, VectorSearchThroughTheShell) {
  Ok("db.films.insertMany([{_id: 1, v: [1, 0], genre: 'a'}, {_id: 2, v: [0, 1], genre: 'b'},"
     " {_id: 3, v: [0.9, 0.1], genre: 'b'}])");
  EXPECT_EQ(Show("db.films.createSearchIndex('vec', 'vectorSearch', {fields: ["
                 "{type: 'vector', path: 'v', numDimensions: 2, similarity: 'euclidean'},"
                 "{type: 'filter', path: 'genre'}]})"),
            "vec\n");
  EXPECT_EQ(Show("db.films.getSearchIndexes().map((i) => i.name + ' ' + i.type).join()"),
            "vec vectorSearch\n");
  EXPECT_EQ(Show("db.films.getIndexes().length"), "1\n");  // search indexes apart
  const std::string search =
      "db.films.aggregate([{$vectorSearch: {index: 'vec', path: 'v', queryVector: [1, 0],"
      " numCandidates: 10, limit: 2, filter: {genre: 'b'}}},"
      " {$project: {_id: 1, s: {$meta: 'vectorSearchScore'}}}]).toArray()";
  // _id 3 first (nearest of genre 'b'); _id 1 is filtered out.
  EXPECT_EQ(Show(search + ".map((d) => d._id).join()"), "3,2\n");
  // Atlas's euclidean score, 1 / (1 + distance).
  EXPECT_EQ(Show("Math.abs(" + search + "[0].s - 1 / (1 + Math.sqrt(0.02))) < 1e-6"), "true\n");
  Ok("db.films.updateSearchIndex('vec', {fields: ["
     "{type: 'vector', path: 'v', numDimensions: 2, similarity: 'cosine'}]})");
  EXPECT_THAT(Show("db.films.getSearchIndexes('vec')[0].latestDefinition.fields[0].similarity"),
              HasSubstr("cosine"));
  Ok("db.films.dropSearchIndex('vec')");
  EXPECT_EQ(Show("db.films.getSearchIndexes().length"), "0\n");
  // No type: Atlas Search, which rockdoc does not build.
  Run("db.films.createSearchIndex('s', {mappings: {dynamic: true}})");
  EXPECT_THAT(err(), HasSubstr("not supported by rockdoc"));
}

}  // namespace
}  // namespace rockdoc::shell
