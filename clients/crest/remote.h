// Internal to the crest CLI: talking to the crestd the global flags name
// (remote_flags.h). Commands that can run remotely call Remote() and, when
// its server is set, ask the daemon through crest::remote (remote/) instead
// of a local database.
#pragma once

#include "crest/remote/channel.h"
#include "remote_flags.h"

namespace crest::cli {

using remote::CallUnary;
using remote::Credentials;
using remote::DaemonChannel;
using remote::LoadCredentials;

}  // namespace crest::cli
