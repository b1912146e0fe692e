// crest: the Crest command-line client.
#include <iostream>
#include <string>
#include <vector>

#include "run_cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return crest::cli::RunCli(args, crest::cli::AllCommands(), std::cout, std::cerr);
}
