# The engine library carries no server (issue 35): neither librockdoc.a nor
# librockdoc.so defines a symbol of the wire layer (rockdoc::wire: the TCP
# server, the wire protocol, SCRAM and its cryptography), nor refers to a
# listening socket's calls, to TLS (OpenSSL's libssl) or to SCRAM's HMAC and
# PBKDF2. rockdoc-serve links those from its own library, rockdoc_wire. The
# engine does use libcrypto's digests (EVP_Digest*, EVP_md5: the hash of
# hashed indexes, bson/element_hash.h; EVP_sha256: encryption key ids) and
# its ciphers (EVP_aes_256_ctr: encryption at
# rest, storage/encryption.h), which this check allows.
#   cmake -DNM=nm "-DLIBRARIES=a;b" -P engine_library_symbols.cmake
if(NOT LIBRARIES)
  message(FATAL_ERROR "engine_library_symbols: no library given")
endif()
foreach(library IN LISTS LIBRARIES)
  if(NOT EXISTS "${library}")
    message(FATAL_ERROR "engine_library_symbols: ${library} does not exist")
  endif()
  # -C demangles; every symbol, defined and undefined, of every member.
  execute_process(COMMAND ${NM} -C "${library}" OUTPUT_VARIABLE symbols
                  ERROR_VARIABLE errors RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "engine_library_symbols: ${NM} ${library} failed: ${errors}")
  endif()
  string(LENGTH "${symbols}" size)
  if(size LESS 100000)
    message(FATAL_ERROR "engine_library_symbols: ${library} lists too few symbols (${size} bytes)")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  set(found)
  foreach(line IN LISTS lines)
    # A symbol line is "<address or blanks> <type> <name>".
    if(line MATCHES "^[0-9a-f ]+ [A-Za-z] (.*)$")
      set(name "${CMAKE_MATCH_1}")
      if(name MATCHES "rockdoc::wire::|Scram|^(listen|accept|accept4|bind)(@|$)|^(HMAC|PKCS5_|SSL_|TLS_|OPENSSL_init_ssl)")
        list(APPEND found "${name}")
      endif()
    endif()
  endforeach()
  if(found)
    list(REMOVE_DUPLICATES found)
    list(LENGTH found count)
    list(SUBLIST found 0 20 shown)
    string(REPLACE ";" "\n  " shown "${shown}")
    message(FATAL_ERROR "${library} carries ${count} symbols of the wire server:\n  ${shown}")
  endif()
  message(STATUS "${library}: no wire, SCRAM, socket or TLS symbol")
endforeach()
