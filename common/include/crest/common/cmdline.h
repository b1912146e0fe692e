// The command line as crest and crestd declare it: options, flags and
// subcommands added to a CLI11 app by functions that alone see CLI11.
//
// CLI11's header is most of the compile time of a file that includes it:
// its classes' inline code is compiled again in every such file (7-9 s of
// the 12-17 s of a command's file on the dev VM, 2026-11-28). So a command
// declares its flags through this header, which names CLI11's types only;
// cmdline.cc and the few files that parse a command line (and catch CLI11's
// parse errors) include CLI11 itself.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace crest::cmdline {

// An option or flag a command added. A handle: the app owns the option.
class Flag {
 public:
  explicit Flag(CLI::Option* option) : option_(option) {}

  // --help shows the value its variable held when it was added.
  Flag& ShowDefault();
  // The parse fails without it (when `required`).
  Flag& Required(bool required = true);
  // Only these values are accepted; the parse error names the option.
  Flag& OneOf(std::initializer_list<const char*> values);
  // A list's values may also come in one argument, split at `separator`.
  Flag& Delimiter(char separator);
  // Read from the environment variable `name` when the command line has none.
  Flag& FromEnv(const std::string& name);
  // The parse fails when both this and `other` are given.
  Flag& Excludes(const Flag& other);
  // --help lists it under `group`.
  Flag& Group(const std::string& group);
  // How many times the command line gave it (0: not given).
  size_t Count() const;

 private:
  CLI::Option* option_;
};

// Adds the option `name` ("--x", or "x" for a positional) that sets `value`.
// T is one of the types cmdline.cc instantiates: int, int64_t, size_t, double,
// std::string, std::vector<std::string>, std::vector<int64_t>.
template <typename T>
Flag AddOption(CLI::App& app, const std::string& name, T& value, const std::string& help);
// Adds the flag `name` that sets `value` to true when given.
Flag AddFlag(CLI::App& app, const std::string& name, bool& value, const std::string& help);
// Adds the option `name` naming a file of "flag = value" lines (TOML/INI)
// that the parse reads as if they were given; the command line wins.
void AddConfigFile(CLI::App& app, const std::string& name, const std::string& help);
// Adds a subcommand; `parent` owns it.
CLI::App* AddCommand(CLI::App& parent, const std::string& name, const std::string& help);
// The parse fails unless exactly one of `app`'s subcommands is named.
void RequireCommand(CLI::App& app);
// Whether the parse ran `app` (the subcommand was named).
bool Parsed(const CLI::App& app);
// How many times the command line gave `app`'s option `name`.
size_t Count(const CLI::App& app, const std::string& name);
// `app` keeps the arguments it does not know (Remaining) instead of failing
// on them or passing them to its parent.
void KeepUnknown(CLI::App& app);
// The arguments a KeepUnknown app kept, in order.
std::vector<std::string> Remaining(const CLI::App& app);

}  // namespace crest::cmdline
