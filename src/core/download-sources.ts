/**
 * What a download of each kind of result is: its identity (a kept `.part` is continued only by the same id and
 * URL) and how it is opened (with the `Range`/`If-Range` headers download() gives). `gw video download`,
 * `gw beta task download` and a batch's downloads all take them from here, so they resume the same way.
 */
import { GatewayError } from '../client/errors.js';
import type { GatewayClient } from '../client/gateway-client.js';
import { content } from '../client/resources/videos.js';
import type { DownloadOptions } from './download.js';
import { GwError } from './errors.js';

/** The identity and opener of a download. */
export type DownloadSource = Pick<DownloadOptions, 'identity' | 'open'>;

/** A video's content: `GET /v1/videos/{id}/content` (through its redirect). */
export function videoSource(client: GatewayClient, id: string): DownloadSource {
  return {
    identity: { id, url: `/v1/videos/${id}/content` },
    open: (_start, signal, headers) => content(client, id, { headers, signal }),
  };
}

/**
 * A result URL of a beta task (its video or last frame), named by `id`. The origin answers 403/404 once the
 * signed URL has expired: a clear error, not an authentication problem of gw.
 */
export function resultUrlSource(client: GatewayClient, url: string, id: string | undefined): DownloadSource {
  return {
    identity: { id, url },
    open: async (_start, signal, headers) => {
      try {
        return await client.raw({ path: url, headers, signal });
      } catch (e) {
        if (e instanceof GatewayError && (e.status === 403 || e.status === 404)) {
          throw new GwError(`the result URL answered HTTP ${e.status}: it has probably expired`, {
            code: 'result_url_expired',
            hint: 'result URLs live about 24 hours; renewal is not offered, create the task again',
          });
        }
        throw e;
      }
    },
  };
}
