// Internal assertions. ROCKDOC_CHECK is always on; ROCKDOC_DCHECK only in
// debug builds (NDEBUG undefined). Both are for programmer errors: user
// input never reaches an assertion, it gets a Status.
#ifndef ROCKDOC_COMMON_LOGGING_H_
#define ROCKDOC_COMMON_LOGGING_H_

namespace rockdoc::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);
}  // namespace rockdoc::internal

#define ROCKDOC_CHECK(cond)                                                  \
  do {                                                                       \
    if (__builtin_expect(!(cond), 0))                                        \
      ::rockdoc::internal::CheckFailed(__FILE__, __LINE__, #cond);           \
  } while (0)

#ifdef NDEBUG
#define ROCKDOC_DCHECK(cond) \
  do {                       \
  } while (0 && (cond))
#else
#define ROCKDOC_DCHECK(cond) ROCKDOC_CHECK(cond)
#endif

#endif  // ROCKDOC_COMMON_LOGGING_H_
