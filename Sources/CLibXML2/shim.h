#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, so <libxml/encoding.h> would pull in the system's ICU headers,
// whose UErrorCode differs from the one Foundation's bundled ICU declares, and clang refuses two
// modules that disagree (a clean build failed on it). Coffer uses none of the ICU-dependent
// declarations (only the tree and parser functions, through dlopen), so it reads them without.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
