// Clang Thread Safety Analysis attributes (clang.llvm.org/docs/
// ThreadSafetyAnalysis.html). The clang build turns on -Wthread-safety and
// -Wthread-safety-beta (lock order), with -Werror in development and CI
// builds; other compilers see empty macros.
#pragma once

#if defined(__clang__)
#define SMBKIT_TSA(x) __attribute__((x))
#else
#define SMBKIT_TSA(x)
#endif

#define CAPABILITY(x) SMBKIT_TSA(capability(x))
#define SCOPED_CAPABILITY SMBKIT_TSA(scoped_lockable)
#define GUARDED_BY(x) SMBKIT_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) SMBKIT_TSA(pt_guarded_by(x))
// Lock order: this mutex is taken before (after) the ones named, never the
// other way round.
#define ACQUIRED_BEFORE(...) SMBKIT_TSA(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) SMBKIT_TSA(acquired_after(__VA_ARGS__))
#define REQUIRES(...) SMBKIT_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) SMBKIT_TSA(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) SMBKIT_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SMBKIT_TSA(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SMBKIT_TSA(try_acquire_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) SMBKIT_TSA(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS SMBKIT_TSA(no_thread_safety_analysis)
