{
  "targets": [{
    "target_name": "rockdoc",
    "sources": ["src/addon.cc"],
    "include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!(node scripts/locate.js include)"
    ],
    "libraries": [
      "-L<!(node scripts/locate.js libdir)",
      "-Wl,-rpath,<!(node scripts/locate.js libdir)",
      "-lrockdoc"
    ],
    "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
    "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
  }]
}
