#pragma once
// Include QCustomPlot through this header. The project builds with QT_NO_FOREACH, but
// qcustomplot.h's inline templates use `foreach`; for that one header the keyword is mapped to
// a range-based for (same semantics for the const member lists it iterates) and removed again.

#if defined(QT_NO_FOREACH) && !defined(foreach)
#define foreach(variable, container) for (variable : container)
#define TS_QCP_DEFINED_FOREACH
#endif

#include <qcustomplot.h>

#ifdef TS_QCP_DEFINED_FOREACH
#undef foreach
#undef TS_QCP_DEFINED_FOREACH
#endif
