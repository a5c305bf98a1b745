/* SPDX-License-Identifier: BSD-2-Clause */
/* common/sysblock.c on a tree of sysfs's shape made here: a disk "loop7"
 * with partitions loop7p1 and loop7p2, /dev/block's links, /class/block's,
 * and the host's own /sys for a device that is no partition. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.h"
#include "sysblock.h"
#include "tap.h"

static char top[] = "/tmp/test_sysblock.XXXXXX";

/* rel's path in the tree. */
static const char *
at(const char *rel)
{
	static char p[4200];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return p;
}

static void
put(const char *rel, const char *text)
{
	if (write_file(at(rel), text) != 0)
		tap_ok(0, "write %s", rel);
}

static void
dir(const char *rel)
{
	if (make_dirs(at(rel), 0755) != 0)
		tap_ok(0, "mkdir %s", rel);
}

static void
link_to(const char *target, const char *rel)
{
	if (symlink(target, at(rel)) != 0)
		tap_ok(0, "symlink %s", rel);
}

int
main(void)
{
	struct sysblock_part sp;
	struct stat st;
	char name[64];
	int rc;

	if (mkdtemp(top) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return tap_done();
	}
	dir("devices/virtual/block/loop7/loop7p1");
	dir("devices/virtual/block/loop7/loop7p2");
	dir("block");
	dir("class/block");
	dir("dev/block");
	put("devices/virtual/block/loop7/loop7p1/partition", "1\n");
	put("devices/virtual/block/loop7/loop7p1/start", "2048\n");
	put("devices/virtual/block/loop7/loop7p1/size", "4096\n");
	put("devices/virtual/block/loop7/loop7p2/partition", "2\n");
	put("devices/virtual/block/loop7/loop7p2/start", "6144\n");
	put("devices/virtual/block/loop7/loop7p2/size", "8192\n");
	link_to("../devices/virtual/block/loop7", "block/loop7");
	link_to("../../devices/virtual/block/loop7", "class/block/loop7");
	link_to("../../devices/virtual/block/loop7/loop7p1",
	    "class/block/loop7p1");
	link_to("../../devices/virtual/block/loop7/loop7p2",
	    "class/block/loop7p2");
	link_to("../../devices/virtual/block/loop7", "dev/block/7:7");
	link_to("../../devices/virtual/block/loop7/loop7p2",
	    "dev/block/259:3");

	rc = sysblock_part_of(top, makedev(259, 3), &sp);
	tap_ok(rc == 0 &&
	    strcmp(sp.disk, "loop7") == 0 && sp.num == 2 && sp.start == 6144 &&
	    sp.size == 8192, "259:3 is partition 2 of loop7 at 6144, 8192 "
	    "long (%s %u %ju %ju)", sp.disk, sp.num, (uintmax_t)sp.start,
	    (uintmax_t)sp.size);
	tap_ok(sysblock_part_of(top, makedev(7, 7), &sp) == -ENOTBLK,
	    "the whole disk is no partition");
	tap_ok(sysblock_part_of(top, makedev(8, 99), &sp) == -ENOENT,
	    "an unknown device: ENOENT");
	/* A file's device, on the host: no partition of a disk it names. */
	if (stat("/proc/self", &st) == 0)
		tap_ok(sysblock_part_of("/sys", st.st_dev, &sp) != 0,
		    "/proc's device is no partition");

	tap_ok(sysblock_part_name(top, "loop7", 1, name, sizeof(name)) == 0 &&
	    strcmp(name, "loop7p1") == 0, "partition 1 of loop7: loop7p1");
	tap_ok(sysblock_part_name(top, "loop7", 2, name, sizeof(name)) == 0 &&
	    strcmp(name, "loop7p2") == 0, "partition 2 of loop7: loop7p2");
	tap_ok(sysblock_part_name(top, "loop7", 3, name, sizeof(name)) ==
	    -ENOENT, "no partition 3");
	tap_ok(sysblock_part_name(top, "loop7", 1, name, 4) == -ENAMETOOLONG,
	    "a name that does not fit: ENAMETOOLONG");

	{
		uint64_t start = 0, size = 0;

		tap_ok(sysblock_part_place(top, "loop7", 2, &start, &size) == 0 &&
		    start == 6144 && size == 8192, "partition 2 of loop7 at "
		    "6144, 8192 long");
		tap_ok(sysblock_part_place(top, "loop7", 5, &start, &size) ==
		    -ENOENT, "no partition 5: ENOENT");
	}
	tap_ok(sysblock_disk_of(top, "/dev/loop7p2", name, sizeof(name)) == 0 &&
	    strcmp(name, "loop7") == 0, "/dev/loop7p2 is on loop7");
	tap_ok(sysblock_disk_of(top, "loop7", name, sizeof(name)) == 0 &&
	    strcmp(name, "loop7") == 0, "loop7 is its own disk");
	tap_ok(sysblock_disk_of(top, "sdz9", name, sizeof(name)) == -ENOENT,
	    "an unknown name: ENOENT");

	(void)remove_tree(top);
	return tap_done();
}
