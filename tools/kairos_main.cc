// File: kairos_main.cc
// Layer: tools. Entry point of the `kairos` CLI: dispatches to registered subcommands.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "subcommand.h"

namespace kairos::tools {
namespace {
struct Entry {
  const char* summary;
  SubcommandMain main;
};
std::map<std::string, Entry>& Registry() {
  static std::map<std::string, Entry> registry;
  return registry;
}
void PrintUsage(FILE* out) {
  fprintf(out, "usage: kairos <command> [options]\n\ncommands:\n");
  for (const auto& [name, entry] : Registry()) fprintf(out, "  %-12s %s\n", name.c_str(), entry.summary);
  fprintf(out, "\nRun 'kairos <command> --help' for the options of a command.\n");
}
}  // namespace

Subcommand::Subcommand(const char* name, const char* summary, SubcommandMain main) {
  Registry()[name] = Entry{summary, main};
}

}  // namespace kairos::tools

int main(int argc, char** argv) {
  using kairos::tools::Registry;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    kairos::tools::PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  auto it = Registry().find(argv[1]);
  if (it == Registry().end()) {
    fprintf(stderr, "kairos: unknown command '%s'\n", argv[1]);
    kairos::tools::PrintUsage(stderr);
    return 2;
  }
  return it->second.main(argc - 1, argv + 1);
}
