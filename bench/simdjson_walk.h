// bench/simdjson_walk.h: simdjson's own full walk of a JSON text, every key
// unescaped and every value read: the physical limit of any simdjson-based
// reader, the reference for rockdoc's JSON -> BSON (json_bench,
// compare_bench).
#ifndef ROCKDOC_BENCH_SIMDJSON_WALK_H_
#define ROCKDOC_BENCH_SIMDJSON_WALK_H_

#include <simdjson.h>

#include <cstddef>
#include <string_view>

namespace rockdoc::bench {

namespace od = simdjson::ondemand;

// simdjson's own full walk: every key unescaped, every value read.
inline size_t Walk(od::value v);
inline size_t WalkObject(od::object o) {
  size_t n = 0;
  for (auto field : o) {
    std::string_view key = field.unescaped_key().value_unsafe();
    n += key.size() + Walk(field.value().value_unsafe());
  }
  return n;
}
inline size_t Walk(od::value v) {
  switch (v.type().value_unsafe()) {
    case od::json_type::object:
      return WalkObject(v.get_object().value_unsafe());
    case od::json_type::array: {
      size_t n = 0;
      for (auto e : v.get_array()) n += Walk(e.value_unsafe());
      return n;
    }
    case od::json_type::string:
      return v.get_string().value_unsafe().size();
    case od::json_type::number:
      if (v.get_number_type().value_unsafe() == od::number_type::floating_point_number) {
        return static_cast<size_t>(v.get_double().value_unsafe());
      }
      return static_cast<size_t>(v.get_int64().value_unsafe());
    case od::json_type::boolean:
      return v.get_bool().value_unsafe();
    case od::json_type::null:
      return v.is_null().value_unsafe();
  }
  return 0;
}

}  // namespace rockdoc::bench

#endif  // ROCKDOC_BENCH_SIMDJSON_WALK_H_
