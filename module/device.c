// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: /dev/secarena, a misc device whose every open() is a private
 * arena of pinned, zeroed, guarded pages for secrets (private keys).
 *
 * This file holds the device: open/release/ioctl, module parameters, the
 * read-only sysfs counters and the hibernation refusal. Page sets live in
 * arena.c, the mapping in vma.c. Userspace contract: uapi/linux/secarena.h
 * and Documentation/userspace-api/secarena.rst.
 *
 * Copyright (C) 2026 The secarena authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/suspend.h>
#include <linux/uaccess.h>

#include "secarena.h"

/* 64 MiB per arena and 1 GiB in all, with 4 KiB pages. */
unsigned long secarena_max_arena_pages = 16384;
module_param_named(max_arena_pages, secarena_max_arena_pages, ulong, 0644);
MODULE_PARM_DESC(max_arena_pages, "Most data pages one arena may hold");

unsigned long secarena_max_total_pages = 262144;
module_param_named(max_total_pages, secarena_max_total_pages, ulong, 0644);
MODULE_PARM_DESC(max_total_pages, "Most data pages all arenas may hold");

/* A quarter of the total: one user alone cannot take it all. */
unsigned long secarena_max_user_pages = 65536;
module_param_named(max_user_pages, secarena_max_user_pages, ulong, 0644);
MODULE_PARM_DESC(max_user_pages, "Most data pages the arenas of one uid may hold");

/*
 * The arena belongs to the mm that opened it: only that mm configures and
 * maps it. Whoever else gets the fd (a fork child, an SCM_RIGHTS or
 * pidfd_getfd() recipient, the image after execve()) may ask INFO.
 */
static int secarena_open(struct inode *inode, struct file *file)
{
	struct secarena_file *sf;

	if (!current->mm)
		return -EPERM;
	sf = kzalloc(sizeof(*sf), SECARENA_GFP);
	if (!sf)
		return -ENOMEM;
	mutex_init(&sf->lock);
	mmgrab(current->mm);
	sf->owner = current->mm;
	sf->cfg.guard_pages = SECARENA_GUARD_PAGES_DEFAULT;
	sf->cfg.fork_policy = SECARENA_FORK_PRIVATE;
	file->private_data = sf;
	secarena_stats_open();
	return nonseekable_open(inode, file);
}

/* Every vma holds the file, so no page set of this file is left here. */
static int secarena_release(struct inode *inode, struct file *file)
{
	struct secarena_file *sf = file->private_data;

	mmdrop(sf->owner);
	mutex_destroy(&sf->lock);
	kfree(sf);
	secarena_stats_release();
	return 0;
}

static int config_check(const struct secarena_config *cfg)
{
	if (cfg->reserved[0] || cfg->reserved[1])
		return -EINVAL;
	if (!cfg->data_size || !PAGE_ALIGNED(cfg->data_size))
		return -EINVAL;
	if (!cfg->guard_pages || cfg->guard_pages > SECARENA_GUARD_PAGES_MAX)
		return -EINVAL;
	if (cfg->fork_policy > SECARENA_FORK_SHARED)
		return -EINVAL;
	/* data_size >> PAGE_SHIFT < 2^52: the sum cannot wrap. */
	if ((cfg->data_size >> PAGE_SHIFT) + 2ULL * cfg->guard_pages >
	    SECARENA_MAX_MAP_PAGES)
		return -EINVAL;
	return 0;
}

static long ioctl_configure(struct secarena_file *sf, void __user *arg)
{
	struct secarena_config cfg;
	int err;

	if (copy_from_user(&cfg, arg, sizeof(cfg)))
		return -EFAULT;
	err = config_check(&cfg);
	if (err)
		return err;

	mutex_lock(&sf->lock);
	if (sf->owner != current->mm) {
		err = -EPERM;
	} else if (sf->spent) {
		err = -EBUSY;
	} else {
		sf->cfg = cfg;
		sf->configured = true;
	}
	mutex_unlock(&sf->lock);
	return err;
}

static long ioctl_info(struct secarena_file *sf, void __user *arg)
{
	struct secarena_info info = {};

	mutex_lock(&sf->lock);
	info.data_size = sf->cfg.data_size;
	info.guard_pages = sf->cfg.guard_pages;
	info.fork_policy = sf->cfg.fork_policy;
	if (sf->configured)
		info.flags |= SECARENA_INFO_CONFIGURED;
	if (sf->pages) {
		info.data_pages = sf->pages->nr;
		info.flags |= SECARENA_INFO_MAPPED;
		if (READ_ONCE(sf->pages->revoked))
			info.flags |= SECARENA_INFO_REVOKED;
	} else if (sf->spent) {
		info.flags |= SECARENA_INFO_SPENT;
	}
	mutex_unlock(&sf->lock);

	if (copy_to_user(arg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/* Only the owner may wipe: the fd may have travelled to another process. */
static long ioctl_wipe(struct secarena_file *sf)
{
	long err = 0;

	mutex_lock(&sf->lock);
	if (sf->owner != current->mm)
		err = -EPERM;
	else if (sf->pages)
		secarena_pages_wipe(sf->pages);
	mutex_unlock(&sf->lock);
	return err;
}

static long secarena_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct secarena_file *sf = file->private_data;

	switch (cmd) {
	case SECARENA_IOC_CONFIGURE:
		return ioctl_configure(sf, (void __user *)arg);
	case SECARENA_IOC_INFO:
		return ioctl_info(sf, (void __user *)arg);
	case SECARENA_IOC_WIPE:
		return ioctl_wipe(sf);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations secarena_fops = {
	.owner = THIS_MODULE,
	.open = secarena_open,
	.release = secarena_release,
	.mmap = secarena_mmap,
	.unlocked_ioctl = secarena_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

#define SECARENA_STAT_ATTR(name)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	struct secarena_stats s;					\
									\
	secarena_stats_get(&s);						\
	return sysfs_emit(buf, "%lu\n", s.name);			\
}									\
static DEVICE_ATTR_RO(name)

SECARENA_STAT_ATTR(arenas);
SECARENA_STAT_ATTR(mapped);
SECARENA_STAT_ATTR(pages_in_use);
SECARENA_STAT_ATTR(pages_peak);
SECARENA_STAT_ATTR(refused_limit);
SECARENA_STAT_ATTR(refused_user_limit);
SECARENA_STAT_ATTR(refused_hibernation);
SECARENA_STAT_ATTR(refused_foreign_mmap);
SECARENA_STAT_ATTR(fork_copy_failed);
SECARENA_STAT_ATTR(revoked_hibernation);

static ssize_t max_arena_pages_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(secarena_max_arena_pages));
}
static DEVICE_ATTR_RO(max_arena_pages);

static ssize_t max_total_pages_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(secarena_max_total_pages));
}
static DEVICE_ATTR_RO(max_total_pages);

static ssize_t max_user_pages_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(secarena_max_user_pages));
}
static DEVICE_ATTR_RO(max_user_pages);

/*
 * Who holds what: "UID PAGES" lines, one per uid with arenas. A table in
 * one file, against sysfs custom, because the set of uids changes and the
 * admin needs it read at one instant; root only, as it names users.
 */
static ssize_t users_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return secarena_users_show(buf);
}
static DEVICE_ATTR_ADMIN_RO(users);

static struct attribute *secarena_attrs[] = {
	&dev_attr_arenas.attr,
	&dev_attr_mapped.attr,
	&dev_attr_pages_in_use.attr,
	&dev_attr_pages_peak.attr,
	&dev_attr_max_arena_pages.attr,
	&dev_attr_max_total_pages.attr,
	&dev_attr_max_user_pages.attr,
	&dev_attr_users.attr,
	&dev_attr_refused_limit.attr,
	&dev_attr_refused_user_limit.attr,
	&dev_attr_refused_hibernation.attr,
	&dev_attr_refused_foreign_mmap.attr,
	&dev_attr_fork_copy_failed.attr,
	&dev_attr_revoked_hibernation.attr,
	NULL
};
ATTRIBUTE_GROUPS(secarena);

/*
 * Every page is charged to the mapper's RLIMIT_MEMLOCK, memcg and uid
 * (max_user_pages), as mlock and memfd_secret are to the first two, so
 * any user may open it without taking memory from another; udev can
 * narrow that.
 */
static struct miscdevice secarena_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "secarena",
	.fops = &secarena_fops,
	.groups = secarena_groups,
	.mode = 0666,
};

/*
 * PM_HIBERNATION_PREPARE comes from hibernate() and from opening
 * /dev/snapshot for reading; either would put arena pages in an image.
 */
static int secarena_pm_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	switch (action) {
	case PM_HIBERNATION_PREPARE:
		return notifier_from_errno(secarena_hibernation_prepare());
	case PM_POST_HIBERNATION:
		secarena_hibernation_done();
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block secarena_pm_nb = {
	.notifier_call = secarena_pm_notify,
};

static int __init secarena_init(void)
{
	int err;

	err = register_pm_notifier(&secarena_pm_nb);
	if (err)
		return err;
	err = misc_register(&secarena_dev);
	if (err)
		unregister_pm_notifier(&secarena_pm_nb);
	return err;
}

static void __exit secarena_exit(void)
{
	misc_deregister(&secarena_dev);
	unregister_pm_notifier(&secarena_pm_nb);
}

module_init(secarena_init);
module_exit(secarena_exit);

MODULE_DESCRIPTION("Pinned, guarded, non-dumpable memory arenas for secrets");
MODULE_AUTHOR("The secarena authors");
MODULE_LICENSE("GPL");
