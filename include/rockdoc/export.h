/* rockdoc/export.h: which declarations the library exports.
 *
 * The library is compiled with -fvisibility=hidden and
 * -fvisibility-inlines-hidden (src/CMakeLists.txt), so that librockdoc.so
 * exports what the public headers promise and nothing else: every
 * declaration of include/rockdoc/ that the library defines (a class with
 * out-of-line members, a function, the C API) is marked ROCKDOC_EXPORT, and
 * everything else, rockdoc::internal and the layers of src/, stays inside
 * the library. tests/exported_symbols.cmake checks the shared library's
 * dynamic symbol table against this rule (`nm -D --defined-only`).
 *
 * A consumer needs nothing: on ELF the attribute is the default visibility,
 * which is right both for the library that defines a symbol and for a
 * program that uses it (even a program built with -fvisibility=hidden
 * itself). Usable from C (rockdoc/c.h includes it).
 */
#ifndef ROCKDOC_EXPORT_H_
#define ROCKDOC_EXPORT_H_

#if !defined(ROCKDOC_EXPORT)
#if defined(__cplusplus) && (defined(__GNUC__) || defined(__clang__))
/* The standard attribute form, which may follow others
 * (`class [[nodiscard]] ROCKDOC_EXPORT Status`). */
#define ROCKDOC_EXPORT [[gnu::visibility("default")]]
#elif defined(__GNUC__) || defined(__clang__)
#define ROCKDOC_EXPORT __attribute__((visibility("default")))
#else
#define ROCKDOC_EXPORT
#endif
#endif /* !defined(ROCKDOC_EXPORT) */

#endif /* ROCKDOC_EXPORT_H_ */
