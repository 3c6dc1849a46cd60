// Nothing for Swift to call: this module only supplies relay-fuzz's entry point (relay_fuzz_main.c).
