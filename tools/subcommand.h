// File: subcommand.h
// Layer: tools. Each `kairos <name>` subcommand lives in its own cmd_<name>.cc and registers
// itself with a static Subcommand object; kairos_main.cc dispatches and prints --help.
#ifndef KAIROS_TOOLS_SUBCOMMAND_H_
#define KAIROS_TOOLS_SUBCOMMAND_H_

namespace kairos::tools {

using SubcommandMain = int (*)(int argc, char** argv);  // argv[0] is the subcommand name

struct Subcommand {
  Subcommand(const char* name, const char* summary, SubcommandMain main);
};

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_SUBCOMMAND_H_
