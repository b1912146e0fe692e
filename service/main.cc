// crestd: the Crest daemon (docs/crestd.md). Everything but this line lives
// in crest::service (server.h, crestd_main.h).
#include "crestd_main.h"

int main(int argc, char** argv) { return crest::service::CrestdMain(argc, argv); }
