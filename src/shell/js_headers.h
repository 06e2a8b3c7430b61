// shell/js_headers.h: the SpiderMonkey (mozjs-102) headers the shell uses,
// in one place.
//
// SpiderMonkey's headers must be compiled without DEBUG (Debian builds the
// engine with --disable-debug and js-config.h refuses a mismatch), and GCC 12
// warns about their rooting idioms (-Wdangling-pointer): the CMake target
// takes care of both; only files of the shell library include this header.
#ifndef ROCKDOC_SHELL_JS_HEADERS_H_
#define ROCKDOC_SHELL_JS_HEADERS_H_

#ifdef DEBUG
#error "SpiderMonkey headers must be compiled without DEBUG (see src/shell/CMakeLists.txt)"
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <js/Array.h>
#include <js/ArrayBuffer.h>
#include <js/BigInt.h>
#include <js/CallAndConstruct.h>
#include <js/CharacterEncoding.h>
#include <js/CompilationAndEvaluation.h>
#include <js/Conversions.h>
#include <js/Date.h>
#include <js/ErrorReport.h>
#include <js/Exception.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/Object.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/RegExp.h>
#include <js/SourceText.h>
#include <js/String.h>
#include <js/experimental/TypedData.h>
#include <jsapi.h>
#include <jsfriendapi.h>
#pragma GCC diagnostic pop

#endif  // ROCKDOC_SHELL_JS_HEADERS_H_
