/* SPDX-License-Identifier: BSD-2-Clause */
/* common/bootconf.c on configuration files made here: a provider taken out
 * of geli_devices and of a group's list with its own lines, a group left
 * empty taken out of geli_groups, a provider named by a link, one not
 * listed (nothing written), a line of a form not understood (kept). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootconf.h"
#include "files.h"
#include "tap.h"

static char top[] = "/tmp/test_bootconf.XXXXXX";
static char conf[4200];

/* The file is text; what it holds after the call is compared whole. */
static char *
slurp(const char *path)
{
	static char buf[8192];

	(void)read_file(path, buf, sizeof(buf));
	return buf;
}

static void
forget(const char *desc, const char *before, const char *prov, int want,
    const char *want_what, const char *after)
{
	char what[256] = "";
	struct stat st;
	int rc;

	write_file(conf, before);
	chmod(conf, 0640);
	rc = bootconf_forget(conf, prov, what, sizeof(what));
	tap_ok(rc == want && (want != 1 || strcmp(what, want_what) == 0),
	    "%s: %d (%s)", desc, rc, what);
	tap_ok(strcmp(slurp(conf), after) == 0, "%s: the file after it", desc);
	if (strcmp(slurp(conf), after) != 0)
		fprintf(stderr, "# got:\n%s# want:\n%s", slurp(conf), after);
	if (want == 1)
		tap_ok(stat(conf, &st) == 0 && (st.st_mode & 0777) == 0640,
		    "%s: its mode kept", desc);
}

int
main(void)
{
	char link[4300], target[4300], what[64];

	if (mkdtemp(top) == NULL)
		return 1;
	snprintf(conf, sizeof(conf), "%s/geli", top);

	forget("one of geli_devices",
	    "# boot\ngeli_devices=\"sdb sdc2 /dev/sdd\"\ngeli_sdc2_flags=\"-k /k\"\n"
	    "geli_sdb_flags=\"-j /p\"\ngeli_sdc2_autodetach=NO  # late\n"
	    "geli_tries=3\n",
	    "/dev/sdc2", 1, "geli_devices",
	    "# boot\ngeli_devices=\"sdb /dev/sdd\"\ngeli_sdb_flags=\"-j /p\"\n"
	    "geli_tries=3\n");
	forget("named by its path",
	    "geli_devices='sdb /dev/sdd' # two\ngeli_sdd_flags=x\n",
	    "/dev/sdd", 1, "geli_devices",
	    "geli_devices='sdb' # two\n");
	forget("a group left empty, and geli_devices too",
	    "geli_devices=\"sdb\"\ngeli_groups=\"tank logs\"\n"
	    "geli_tank_devices=\"sdb sdx\"\ngeli_tank_flags=\"-k /t\"\n"
	    "geli_logs_devices=\"sde\"\ngeli_logs_flags=\"-k /l\"\n",
	    "/dev/sdb", 1, "geli_devices, geli_tank_devices",
	    "geli_devices=\"\"\ngeli_groups=\"tank logs\"\n"
	    "geli_tank_devices=\"sdx\"\ngeli_tank_flags=\"-k /t\"\n"
	    "geli_logs_devices=\"sde\"\ngeli_logs_flags=\"-k /l\"\n");
	forget("a group's last provider: the group goes",
	    "geli_groups=\"tank logs\"\ngeli_tank_devices=\"sdb\"\n"
	    "geli_tank_flags=\"-k /t\"\ngeli_logs_devices=\"sde\"\n",
	    "/dev/sde", 1, "geli_logs_devices",
	    "geli_groups=\"tank\"\ngeli_tank_devices=\"sdb\"\n"
	    "geli_tank_flags=\"-k /t\"\n");
	forget("not listed: nothing written",
	    "geli_devices=\"sdb\"\n", "/dev/sdz", 0, "", "geli_devices=\"sdb\"\n");
	forget("a line of another form is kept as it is",
	    "geli_devices=\"sdb $MORE\"\ngeli_sdb_flags=x\n", "/dev/sdb", 0, "",
	    "geli_devices=\"sdb $MORE\"\ngeli_sdb_flags=x\n");

	/* Named by a link (disk/by-partlabel/...): resolved. */
	snprintf(target, sizeof(target), "%s/real.img", top);
	snprintf(link, sizeof(link), "%s/link.img", top);
	write_file(target, "");
	tap_ok(symlink(target, link) == 0, "a link made");
	{
		char before[9000], after[9000];

		snprintf(before, sizeof(before), "geli_devices=\"%s sdb\"\n", link);
		snprintf(after, sizeof(after), "geli_devices=\"sdb\"\n");
		forget("named by a link to it", before, target, 1,
		    "geli_devices", after);
	}
	unlink(conf);
	tap_ok(bootconf_forget(conf, "/dev/sdb", what, sizeof(what)) == 0,
	    "no file: nothing to do");
	tap_ok(access(conf, F_OK) != 0, "... and none made");
	remove_tree(top);
	return tap_done();
}
