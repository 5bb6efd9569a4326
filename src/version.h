/* Which tbench this is: the suite, its version and the git revision it was
 * built from, so that nobody takes it for dbench's tbench. */
#ifndef TBENCH_VERSION_H
#define TBENCH_VERSION_H

/* "PROGRAM (tbench suite) 0.1.0, git 1a2b3c4" */
const char *version_line(const char *program);

#endif
