#include <libxml/parser.h>
#include <libxml/tree.h>
