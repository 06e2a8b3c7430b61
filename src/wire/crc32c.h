// wire/crc32c.h: CRC-32C (Castagnoli), the checksum of OP_MSG's
// checksumPresent flag.
//
// The polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and final
// XOR 0xFFFFFFFF, as RFC 3720 (iSCSI) specifies it; its check value, the
// CRC of "123456789", is 0xE3069283. MongoDB appends it little-endian after
// the last section, over every byte of the message before it, the header
// included.
//
// Thread safety: pure functions.
#ifndef ROCKDOC_WIRE_CRC32C_H_
#define ROCKDOC_WIRE_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace rockdoc::wire {

// The CRC-32C of `data`. To checksum data in pieces, pass the previous
// piece's result as `crc`: Crc32c(b, Crc32c(a)) == Crc32c(a + b).
// Example:
//   uint32_t c = Crc32c("123456789");  // 0xE3069283
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_CRC32C_H_
