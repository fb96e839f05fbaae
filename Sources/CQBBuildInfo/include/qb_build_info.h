#ifndef QB_BUILD_INFO_H
#define QB_BUILD_INFO_H

// The commit the binary was built from. The definitions are generated before each build
// (Plugins/BuildInfoPlugin, in the QBBuildInfo module the executable links); this header
// never changes, so a new commit does not recompile the modules that read it. A binary
// without QBBuildInfo (the test bundles) gets build_info.c's weak defaults.

// `git rev-parse HEAD` of the package at build time, or "unknown".
const char *qb_build_commit(void);

// Whether tracked files had uncommitted changes at build time: 1 yes, 0 no, -1 unknown.
int qb_build_dirty(void);

#endif
