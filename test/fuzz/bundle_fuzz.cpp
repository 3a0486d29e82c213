// libFuzzer target: the bundle reader never crashes, every refusal names its check, and what
// it accepts is consistent. Each input is read twice: as a file, and as the manifest and
// payloads behind a freshly sealed header (the first two bytes give the manifest's length),
// so the fuzzer reaches the manifest, payload and ISA checks behind the checksums.
#include "hologram/artifact/bundle.h"

#include <xxhash.h>

#include <cstdlib>
#include <string>

namespace {

void check(std::string bytes) {
  using namespace hologram;
  auto read = artifact::read_bundle(std::move(bytes));
  if (!read) {
    Status st = read.status();
    if (st.code() != ErrorCode::InvalidModule || st.message().find(": ") == std::string::npos)
      std::abort();
    return;
  }
  const artifact::Bundle &b = *read;
  if (!b.find_payload(artifact::kPayloadIsa) ||
      !(isa::content_hash(b.module, b.options) == b.content_hash))
    std::abort();
}

void put64(std::string &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace hologram::artifact;
  std::string input(reinterpret_cast<const char *>(data), size);
  check(input);
  if (size < 2) return 0;
  size_t manifest_size = (data[0] | (size_t{data[1]} << 8)) % (size - 1);
  std::string manifest = input.substr(2, manifest_size);
  std::string out(kBundleHeaderSize, '\0');
  out.replace(0, kBundleMagic.size(), kBundleMagic);
  out[8] = static_cast<char>(kBundleFormatVersion);
  out[12] = static_cast<char>(kBundleHeaderSize);
  out += input.substr(2);
  put64(out, 48, out.size());
  put64(out, 56, manifest.size());
  put64(out, 64, XXH3_64bits(manifest.data(), manifest.size()));
  put64(out, 72, XXH3_64bits(out.data(), 72));
  check(out);
  return 0;
}
