-- The done transfers by destination first (issue 15's follow-up): where the storage keeps no
-- marks (NFSv3, ramfs, some FUSE mounts), whether Haul published the file already at an explicit
-- --dest is asked of the done transfers by destination alone (`destWrittenBefore`), once before
-- a re-mirrored file is fetched and once before it is published. transfers_previous, on
-- (url, dest), could not serve that: each check read every done transfer, a nightly re-mirror
-- of thousands of files on NFS as many whole-table scans. The same index with its columns
-- swapped serves it, and every lookup by URL names the destination too (earlier versions,
-- earlier copies of a URL), so no index is added and none is written more often.

DROP INDEX transfers_previous;
CREATE INDEX transfers_previous ON transfers (dest, url) WHERE state = 'done';
