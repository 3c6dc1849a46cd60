// relay-fuzz's entry point. SwiftPM links an executable target with `main` aliased to `relay_fuzz_main`, the name
// it gives the Swift module's own entry point; relay-fuzz has none (libFuzzer drives it), so this supplies that name
// and hands control to libFuzzer's driver, which `-sanitize=fuzzer` links in.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int relay_fuzz_main(int argc, char **argv) {
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
