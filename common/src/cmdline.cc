#include "crest/common/cmdline.h"

#include <cstdint>

#include "CLI/CLI.hpp"

namespace crest::cmdline {

Flag& Flag::ShowDefault() {
  option_->capture_default_str();
  return *this;
}

Flag& Flag::Required(bool required) {
  option_->required(required);
  return *this;
}

Flag& Flag::OneOf(std::initializer_list<const char*> values) {
  option_->check(CLI::IsMember(values));
  return *this;
}

Flag& Flag::Delimiter(char separator) {
  option_->delimiter(separator);
  return *this;
}

Flag& Flag::FromEnv(const std::string& name) {
  option_->envname(name);
  return *this;
}

Flag& Flag::Excludes(const Flag& other) {
  option_->excludes(other.option_);
  return *this;
}

Flag& Flag::Group(const std::string& group) {
  option_->group(group);
  return *this;
}

size_t Flag::Count() const { return option_->count(); }

template <typename T>
Flag AddOption(CLI::App& app, const std::string& name, T& value, const std::string& help) {
  return Flag(app.add_option(name, value, help));
}

template Flag AddOption(CLI::App&, const std::string&, int&, const std::string&);
template Flag AddOption(CLI::App&, const std::string&, int64_t&, const std::string&);
template Flag AddOption(CLI::App&, const std::string&, size_t&, const std::string&);
template Flag AddOption(CLI::App&, const std::string&, double&, const std::string&);
template Flag AddOption(CLI::App&, const std::string&, std::string&, const std::string&);
template Flag AddOption(CLI::App&, const std::string&, std::vector<std::string>&,
                        const std::string&);
template Flag AddOption(CLI::App&, const std::string&, std::vector<int64_t>&, const std::string&);

Flag AddFlag(CLI::App& app, const std::string& name, bool& value, const std::string& help) {
  return Flag(app.add_flag(name, value, help));
}

void AddConfigFile(CLI::App& app, const std::string& name, const std::string& help) {
  app.set_config(name, "", help);
}

CLI::App* AddCommand(CLI::App& parent, const std::string& name, const std::string& help) {
  return parent.add_subcommand(name, help);
}

void RequireCommand(CLI::App& app) { app.require_subcommand(1); }

bool Parsed(const CLI::App& app) { return app.parsed(); }

size_t Count(const CLI::App& app, const std::string& name) { return app.count(name); }

void KeepUnknown(CLI::App& app) {
  app.fallthrough(false);
  app.allow_extras();
}

std::vector<std::string> Remaining(const CLI::App& app) { return app.remaining(); }

}  // namespace crest::cmdline
