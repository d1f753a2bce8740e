#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <postgresql/libpq-fe.h>
#endif
