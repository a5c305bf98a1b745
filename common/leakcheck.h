/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The leak check of a process whose memory lives: the attach daemon ends
 * with _exit(), which LeakSanitizer's check at exit never sees, and the
 * sanitized pass leaves the exits of one-shot commands unchecked
 * (leak_check_at_exit=0: docs/testing.md says why).  In a build with
 * AddressSanitizer, leak_check() runs LeakSanitizer's check now (a leak
 * ends the process with its report); elsewhere it is nothing.
 */
#ifndef GELI_COMMON_LEAKCHECK_H
#define GELI_COMMON_LEAKCHECK_H

#if defined(__SANITIZE_ADDRESS__)
#define GELI_LEAKCHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GELI_LEAKCHECK 1
#endif
#endif

#ifdef GELI_LEAKCHECK
#include <sanitizer/lsan_interface.h>
static inline void
leak_check(void)
{
	__lsan_do_leak_check();
}
#else
static inline void
leak_check(void)
{
}
#endif

#endif
