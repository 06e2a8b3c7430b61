// A consumer of the installed library: public headers only, C++17.
#include <iostream>

#include "rockdoc/document.h"
#include "rockdoc/json.h"

int main() {
  auto doc = rockdoc::FromJson(R"({"name": "Ada", "born": {"$numberLong": "1815"}})");
  if (!doc.ok()) {
    std::cerr << doc.status() << "\n";
    return 1;
  }
  if (doc->GetPath("born").Int64() != 1815) return 1;
  std::cout << rockdoc::ToJson(*doc) << "\nrockdoc consumer ok\n";
  return 0;
}
