// Generated from generated/openapi.json by `npm run openapi`. Do not edit.
export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List all animals
         * @description One page of pets, at most `limit`. With `status`, only pets of that status, in creation order; without, in storage order. While more remain, the `Link rel="next"` header holds the next page's URL. Needs an API key with the `pets:read` scope.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add an animal
         * @description Stores a new pet and answers it, with its id and its `Location`. With an `Idempotency-Key`, a retry answers the first result and creates nothing. Needs an API key with the `pets:write` scope.
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an animal (deprecated: use GET /pets with a status filter)
         * @deprecated
         * @description Needs an API key with the `pets:read` scope. Deprecated since 2026-01-01; use `GET /pets`. From Thu, 05 Dec 2030 00:00:00 GMT (the sunset) it answers 410 `gone`.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List store orders (not implemented)
         * @description Named by the interface, never specified: answers 501 `not_implemented` after authentication. Needs an API key with the `orders:read` scope.
         */
        get: operations["listStoreOrders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Whether this region of the API can read its tables
         * @description Answers 200 `{"status":"ok"}` when this region can read its pets, keys and idempotency tables, else 503; nothing more. For health checks: it needs no API key, and its answer is reused for a few seconds. Needs no API key.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Pet: {
            /**
             * Format: int64
             * @description Unique identifier assigned by the service on creation.
             */
            id: number;
            /** @description The animal's name, as it was sent when the pet was created. */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to.
             */
            categoryId: number;
            /** @enum {string} */
            status: "available" | "pending" | "sold";
        };
        NewPet: {
            /** @description The animal's name: 1 to 256 characters, not blank, without control characters or lone surrogates. */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to.
             */
            categoryId: number;
            /**
             * @default available
             * @enum {string}
             */
            status?: "available" | "pending" | "sold";
        };
        /** @enum {string} */
        PetStatus: "available" | "pending" | "sold";
        Error: {
            /**
             * @description What went wrong, for programs.
             * @enum {string}
             */
            code: "invalid_json" | "unsupported_media_type" | "validation_failed" | "invalid_cursor" | "unauthorized" | "forbidden" | "not_found" | "gone" | "payload_too_large" | "idempotency_key_reused" | "too_many_requests" | "quota_exceeded" | "request_refused" | "internal_error" | "not_implemented" | "service_unavailable";
            /** @description What went wrong, for people: names the field or parameter. */
            message: string;
            /**
             * Format: int32
             * @description The HTTP status, repeated.
             */
            status: number;
        };
    };
    responses: never;
    parameters: {
        /** @description How many pets a page holds. */
        limit: number;
        /** @description Only pets with this status. */
        status: components["schemas"]["PetStatus"];
        /** @description Where the next page starts: copy it from the `Link rel="next"` header of the same listing. Opaque. */
        cursor: string;
        /** @description Makes the create safe to retry (IETF httpapi-idempotency-key draft). The value is an RFC 8941 string (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`) or the same key bare (letters, digits, `-._~:/+=`), of 1 to 255 characters. For 24 hours, the same key from the same API key with the same body answers the first 201 again (with `Idempotent-Replayed: true`) and creates nothing; with another body, 422 `idempotency_key_reused`. Concurrent duplicates all answer 201 with one result: what is created and its key are stored together, so no request is ever told to wait. Malformed or repeated: 400. */
        idempotencyKey: string;
        /** @description The pet id: a decimal integer, no sign, no leading zeros. */
        petId: number;
    };
    requestBodies: never;
    headers: {
        /** @description The request id (API Gateway's x-amzn-RequestId); it appears in the request's log lines. */
        RequestId: string;
        /** @description The same request id, on every answer that reached a function, and on the 501. */
        FunctionRequestId: string;
        /** @description Always `no-store`. */
        CacheControl: "no-store";
        /** @description Always `nosniff`. */
        ContentTypeOptions: "nosniff";
        /** @description What was created: the create's path and its id (`…/v1/pets/{id}`). */
        Location: string;
        /** @description `<…/v1/pets?limit=…&cursor=…>; rel="next"` (RFC 8288) while more pets remain; absent on the last page. */
        LinkNext: string;
        /** @description `<…/v1/pets>; rel="successor-version"`: what replaces this operation. */
        LinkSuccessor: string;
        /** @description RFC 9745: when the operation was deprecated, as `@<unix seconds>`. */
        Deprecation: string;
        /** @description RFC 8594: when the operation stops working (then 410). */
        Sunset: string;
        /** @description Seconds to wait before retrying: 1 when throttled or when the service is unavailable; 3600 when the quota is used up (a fixed hint: the quota starts again with its period). */
        RetryAfter: "1" | "3600";
        /** @description The scheme the API expects. */
        WwwAuthenticate: "Bearer realm=\"pet-store\"";
        /** @description RFC 6750: the key is valid, but its scopes do not cover the operation. */
        WwwAuthenticateInsufficientScope: "Bearer realm=\"pet-store\", error=\"insufficient_scope\"";
        /** @description The API key's usage plan (IETF httpapi ratelimit-headers draft): `"NAME";q=<requests>;w=<seconds>` for its rate, and `"NAME-quota";q=<requests>;w=<seconds>` for its quota if it has one (a day is 86400, a week 604800, a month 2592000). Over the rate: 429 `too_many_requests`; over the quota: 429 `quota_exceeded`. No remaining count is given. */
        RateLimitPolicy: string;
        /** @description `true` when this is the stored answer of an earlier request with the same `Idempotency-Key` (nothing new was created); absent otherwise. */
        IdempotentReplayed: "true";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description How many pets a page holds. */
                limit?: components["parameters"]["limit"];
                /** @description Only pets with this status. */
                status?: components["parameters"]["status"];
                /** @description Where the next page starts: copy it from the `Link rel="next"` header of the same listing. Opaque. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of pets, in storage order (by creation with a status filter). A bare JSON array. */
            200: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Link: components["headers"]["LinkNext"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": 244383887647238,
                     *         "name": "Rex",
                     *         "categoryId": 1,
                     *         "status": "available"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Pet"][];
                };
            };
            /** @description `validation_failed`: a field or parameter is missing, of the wrong type, out of range, unknown (any query parameter of an operation that takes none) or repeated, or a `name` holds a control character or a lone surrogate. `invalid_cursor`: the cursor is malformed, edited, or from a listing with another status. */
            400: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "validation_failed" | "invalid_cursor";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`: no Authorization header, not the Bearer scheme, or an unknown, revoked or expired key. */
            401: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `forbidden`: the API key's scopes do not cover this operation, the key is on no usage plan of this stage (ask the API's operators), or the gateway blocked the request (it needs the `pets:read` scope). */
            403: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "forbidden";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `payload_too_large`: the body is over 16384 bytes. */
            413: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `too_many_requests`: over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds. `quota_exceeded`: the API key's usage plan quota is used up until its period starts again: Retry-After is a fixed hint. */
            429: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "too_many_requests" | "quota_exceeded";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`: an unexpected error; details are logged, not sent. */
            500: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`: the database is unavailable: retry after Retry-After seconds. */
            503: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the create safe to retry (IETF httpapi-idempotency-key draft). The value is an RFC 8941 string (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`) or the same key bare (letters, digits, `-._~:/+=`), of 1 to 255 characters. For 24 hours, the same key from the same API key with the same body answers the first 201 again (with `Idempotent-Replayed: true`) and creates nothing; with another body, 422 `idempotency_key_reused`. Concurrent duplicates all answer 201 with one result: what is created and its key are stored together, so no request is ever told to wait. Malformed or repeated: 400. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description At most 16384 bytes. Unknown fields, a client-chosen `id` included, are refused. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Rex",
                 *       "categoryId": 1
                 *     }
                 */
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The pet as stored, with its new id; for a repeated `Idempotency-Key`, the first answer again. */
            201: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Location: components["headers"]["Location"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": 244383887647238,
                     *       "name": "Rex",
                     *       "categoryId": 1,
                     *       "status": "available"
                     *     }
                     */
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `validation_failed`: a field or parameter is missing, of the wrong type, out of range, unknown (any query parameter of an operation that takes none) or repeated, or a `name` holds a control character or a lone surrogate. `invalid_json`: the body is empty, not UTF-8, not valid JSON, or repeats a member name in one object (I-JSON, RFC 7493). `unsupported_media_type`: the body is not sent as JSON ('Content-Type: application/json'). */
            400: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "validation_failed" | "invalid_json" | "unsupported_media_type";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`: no Authorization header, not the Bearer scheme, or an unknown, revoked or expired key. */
            401: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `forbidden`: the API key's scopes do not cover this operation, the key is on no usage plan of this stage (ask the API's operators), or the gateway blocked the request (it needs the `pets:write` scope). */
            403: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "forbidden";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `payload_too_large`: the body is over 16384 bytes. */
            413: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `idempotency_key_reused`: this `Idempotency-Key` was already used with a different body. */
            422: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "idempotency_key_reused";
                        /** @constant */
                        status?: 422;
                    };
                };
            };
            /** @description `too_many_requests`: over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds. `quota_exceeded`: the API key's usage plan quota is used up until its period starts again: Retry-After is a fixed hint. */
            429: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "too_many_requests" | "quota_exceeded";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`: an unexpected error; details are logged, not sent. */
            500: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`: the database is unavailable: retry after Retry-After seconds. */
            503: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The pet id: a decimal integer, no sign, no leading zeros. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet. */
            200: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `validation_failed`: a field or parameter is missing, of the wrong type, out of range, unknown (any query parameter of an operation that takes none) or repeated, or a `name` holds a control character or a lone surrogate. */
            400: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "validation_failed";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`: no Authorization header, not the Bearer scheme, or an unknown, revoked or expired key. */
            401: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `forbidden`: the API key's scopes do not cover this operation, the key is on no usage plan of this stage (ask the API's operators), or the gateway blocked the request (it needs the `pets:read` scope). */
            403: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "forbidden";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `not_found`: nothing has the id the path names. */
            404: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "not_found";
                        /** @constant */
                        status?: 404;
                    };
                };
            };
            /** @description `gone`: the operation is past its sunset. */
            410: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "gone";
                        /** @constant */
                        status?: 410;
                    };
                };
            };
            /** @description `payload_too_large`: the body is over 16384 bytes. */
            413: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `too_many_requests`: over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds. `quota_exceeded`: the API key's usage plan quota is used up until its period starts again: Retry-After is a fixed hint. */
            429: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "too_many_requests" | "quota_exceeded";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`: an unexpected error; details are logged, not sent. */
            500: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`: the database is unavailable: retry after Retry-After seconds. */
            503: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["LinkSuccessor"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    listStoreOrders: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `validation_failed`: a field or parameter is missing, of the wrong type, out of range, unknown (any query parameter of an operation that takes none) or repeated, or a `name` holds a control character or a lone surrogate. */
            400: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "validation_failed";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`: no Authorization header, not the Bearer scheme, or an unknown, revoked or expired key. */
            401: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `forbidden`: the API key's scopes do not cover this operation, the key is on no usage plan of this stage (ask the API's operators), or the gateway blocked the request (it needs the `orders:read` scope). */
            403: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "forbidden";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `payload_too_large`: the body is over 16384 bytes. */
            413: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `too_many_requests`: over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds. `quota_exceeded`: the API key's usage plan quota is used up until its period starts again: Retry-After is a fixed hint. */
            429: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "too_many_requests" | "quota_exceeded";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`: an unexpected error; details are logged, not sent. */
            500: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `not_implemented`: the operation is listed by the interface but not specified. */
            501: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "not_implemented";
                        /** @constant */
                        status?: 501;
                    };
                };
            };
            /** @description `service_unavailable`: the database is unavailable: retry after Retry-After seconds. */
            503: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This region can read its tables. */
            200: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        status: "ok";
                    };
                };
            };
            /** @description `too_many_requests`: over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds. */
            429: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "too_many_requests";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`: an unexpected error; details are logged, not sent. */
            500: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`: the database is unavailable: retry after Retry-After seconds. */
            503: {
                headers: {
                    "x-amzn-RequestId": components["headers"]["RequestId"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    "X-Content-Type-Options": components["headers"]["ContentTypeOptions"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    "X-Request-Id": components["headers"]["FunctionRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {unknown} */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
}
