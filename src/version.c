#include "config.h"
#include "version.h"

#include <stdio.h>

#include "git-rev.h"   /* generated at build time: TBENCH_GIT_REV */

const char *version_line(const char *program)
{
	static char line[160];

	snprintf(line, sizeof(line), "%s (tbench suite) %s, git %s", program, PACKAGE_VERSION,
		 TBENCH_GIT_REV);
	return line;
}
