/* SPDX-License-Identifier: BSD-2-Clause */
/* Client side of the control channel (see ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "rundir.h"

bool
ctl_peer_trusted(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	    (cr.uid == 0 || cr.uid == geteuid());
}

int
ctl_call(const char *name, const struct ctl_request *req,
    struct ctl_reply *reply)
{
	struct sockaddr_un sa;
	uint8_t *msg;
	ssize_t n, len;
	int fd = -1, error;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (rundir_entry(NULL, name, RUNDIR_CTL, sa.sun_path,
	    sizeof(sa.sun_path)) != 0)
		return -ENAMETOOLONG;
	/* Locked: a request may carry a user key. */
	msg = geli_secure_alloc(CTL_MAX);
	if (msg == NULL)
		return -ENOMEM;
	len = ctl_request_encode(req, msg, CTL_MAX);
	if (len < 0) {
		error = (int)len;
		goto out;
	}
	/* Requests may carry keys: only to a daemon of ours (or root's). */
	if ((error = rundir_private()) != 0)
		goto out;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		error = -errno;
		goto out;
	}
	if (!ctl_peer_trusted(fd)) {
		error = -EPERM;
		goto out;
	}
	if (send(fd, msg, (size_t)len, MSG_NOSIGNAL) != len) {
		error = -errno;
		goto out;
	}
	n = recv(fd, msg, CTL_MAX, MSG_TRUNC);
	if (n <= 0) {
		error = n == 0 ? -ECONNRESET : -errno;
		goto out;
	}
	error = n > CTL_MAX ? -EMSGSIZE : ctl_reply_decode(msg, (size_t)n, reply);
	if (error == -EBADMSG)
		error = -EPROTO;
out:
	if (fd >= 0)
		close(fd);
	geli_secure_free(msg);
	return error;
}

int
ctl_status(const char *name, struct ctl_status *st)
{
	struct ctl_request req;
	struct ctl_reply *reply;
	int error;

	ctl_request_init(&req, CTL_STATUS);
	reply = malloc(sizeof(*reply));
	if (reply == NULL)
		return -ENOMEM;
	error = ctl_call(name, &req, reply);
	if (error == 0 && (reply->code != 0 || !reply->has_status))
		error = -EPROTO;
	if (error == 0 && st != NULL)
		*st = reply->status;
	free(reply);
	return error;
}
