/* SPDX-License-Identifier: MIT */
/* Calibration (filled in by the next commit). */
#include "model.h"
