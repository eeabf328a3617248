#ifndef HAUL_CLIBPQ_SHIM_H
#define HAUL_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
