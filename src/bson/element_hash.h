// bson/element_hash.h: MongoDB's 64-bit hash of a BSON value, the key that
// hashed indexes store and that mongosh's convertShardKeyToHashed() shows.
//
// The hash is MD5 (OpenSSL's; never written by hand) over a canonical
// encoding of the value, and its first eight bytes read as a little-endian
// int64, so that keys agree with MongoDB's to the bit:
//   * the seed, an int32 (0 for hashed indexes), little-endian;
//   * the value's canonical type rank (CanonicalTypeRank), an int32;
//   * inside a document or array (and for the scope of code with scope,
//     after the code's bytes), each element as its rank, its field name
//     with its NUL, then its value, and at the end the rank of the end of a
//     document (0) with an empty name;
//   * a number as an int64: truncated toward zero, NaN as 0, and clamped
//     to int64's range (except the double 2^63, which MongoDB has always
//     hashed as INT64_MIN), so 2.3 and 2 collide, as MongoDB documents;
//   * any other value as its BSON value bytes (a string's length prefix
//     and NUL included; nothing for null, undefined, MinKey and MaxKey).
//
// Thread safety: a pure function.
#ifndef ROCKDOC_BSON_ELEMENT_HASH_H_
#define ROCKDOC_BSON_ELEMENT_HASH_H_

#include <cstdint>

#include "rockdoc/document.h"

namespace rockdoc::internal {

// The hash of `value` (an element that is not ok() hashes as null, as a
// missing field does in a hashed index).
int64_t HashBsonValue(const Element& value, int32_t seed = 0);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_BSON_ELEMENT_HASH_H_
