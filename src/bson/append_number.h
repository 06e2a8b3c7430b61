// bson/append_number.h: a count or size as MongoDB's replies carry it
// (BSONObjBuilder::appendNumber): int32 when it fits, int64 otherwise, so
// small figures read as plain numbers in every client.
//
// Thread safety: pure function.
#ifndef ROCKDOC_BSON_APPEND_NUMBER_H_
#define ROCKDOC_BSON_APPEND_NUMBER_H_

#include <cstdint>
#include <limits>
#include <string_view>

#include "rockdoc/document.h"

namespace rockdoc::internal {

inline void AppendNumber(BsonBuilder* b, std::string_view key, int64_t v) {
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    b->AppendInt32(key, static_cast<int32_t>(v));
  } else {
    b->AppendInt64(key, v);
  }
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_BSON_APPEND_NUMBER_H_
