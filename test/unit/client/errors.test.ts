import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GatewayError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  errorFromBody,
} from '../../../src/client/errors.js';
import { exitCodeOf, hintOf } from '../../../src/core/error-map.js';

describe('errorFromBody maps every documented error shape to one GatewayError', () => {
  it('common §2.4 body: code, message, request ids and the documented hint', () => {
    const body = {
      error: {
        message: 'model chat-x not found (req-1)',
        type: 'invalid_request_error',
        code: 'model_not_found',
        request_id: 'req-1',
        upstream_request_id: 'up-9',
      },
    };
    const e = errorFromBody(404, JSON.stringify(body), 'req-header');
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('model_not_found');
    expect(e.status).toBe(404);
    expect(e.requestId).toBe('req-1');
    expect(e.upstreamRequestId).toBe('up-9');
    expect(hintOf(e)).toMatch(/gw models/);
    expect(hintOf(e)).toMatch(/token.*channel.*entitlement/);
    expect(exitCodeOf(e)).toBe(1);
    expect(e.toJSON()).toEqual({ error: body.error });
  });

  it('beta task body (409 Conflict): code, param and type; request id from the header', () => {
    const body = {
      error: {
        code: 'InvalidAction.RunningTaskDeletion',
        message: 'task is running',
        param: 'task_id',
        type: 'Conflict',
      },
    };
    const e = errorFromBody(409, JSON.stringify(body), 'req-2');
    expect(e.code).toBe('InvalidAction.RunningTaskDeletion');
    expect(e.type).toBe('Conflict');
    expect(e.param).toBe('task_id');
    expect(e.requestId).toBe('req-2');
    expect(hintOf(e)).toMatch(/running task cannot be deleted/);
  });

  it('asset library ResponseMetadata.Error', () => {
    const body = {
      ResponseMetadata: {
        RequestId: 'rm-3',
        Action: 'GetAsset',
        Error: { Code: 'ResourceNotFound.Asset', Message: 'no such asset' },
      },
    };
    const e = errorFromBody(404, JSON.stringify(body), undefined);
    expect(e.code).toBe('ResourceNotFound.Asset');
    expect(e.message).toBe('no such asset');
    expect(e.requestId).toBe('rm-3');
    expect(hintOf(e)).toMatch(/another tenant/);
  });

  it('alpha envelope with a non-zero code', () => {
    const e = errorFromBody(
      400,
      JSON.stringify({ code: 1201, message: 'invalid parameter', request_id: 'a-4' }),
      undefined,
    );
    expect(e.code).toBe('1201');
    expect(e.requestId).toBe('a-4');
  });

  it('an HTML 502 page from a proxy becomes a readable error with the page title', () => {
    const e = errorFromBody(
      502,
      '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
      'req-5',
    );
    expect(e.code).toBe('http_502');
    expect(e.message).toContain('502 Bad Gateway');
    expect(e.requestId).toBe('req-5');
  });

  it('401 and 403 become AuthenticationError / PermissionDeniedError, which the CLI exits 3 for', () => {
    const e401 = errorFromBody(
      401,
      JSON.stringify({ error: { message: 'bad token', code: 'invalid_api_key' } }),
      'r',
    );
    const e403 = errorFromBody(
      403,
      JSON.stringify({ error: { message: 'forbidden', code: 'permission_denied' } }),
      'r',
    );
    expect(e401).toBeInstanceOf(AuthenticationError);
    expect(e403).toBeInstanceOf(PermissionDeniedError);
    expect(exitCodeOf(e401)).toBe(3);
    expect(exitCodeOf(e403)).toBe(3);
    expect(hintOf(e403)).toMatch(/quota|enabled/);
  });

  it('chooses the class from the status, as the official SDKs do; the client sets no CLI hint', () => {
    const cases: [number, new (...a: never[]) => GatewayError][] = [
      [400, BadRequestError],
      [404, NotFoundError],
      [409, ConflictError],
      [429, RateLimitError],
      [500, InternalServerError],
      [503, InternalServerError],
    ];
    for (const [status, Cls] of cases) {
      const e = errorFromBody(status, JSON.stringify({ error: { code: 'x', message: 'm' } }), 'r', {
        'x-gateway-request-id': 'r',
      });
      expect(e).toBeInstanceOf(Cls);
      expect(e).toBeInstanceOf(GatewayError);
      expect(e.status).toBe(status);
      expect(e.headers['x-gateway-request-id']).toBe('r');
      expect(e.hint).toBeUndefined();
      expect('exitCode' in e).toBe(false);
    }
    const m = errorFromBody(404, JSON.stringify({ error: { code: 'model_not_found', message: 'm' } }), 'r');
    expect(m.hint).toBeUndefined();
    expect(hintOf(m)).toMatch(/gw models/);
  });
});
