/**
 * How the transport reads an answer: whole, for JSON and text requests, or as an open stream, for
 * watches. Both give the transport's retry and error handling the same view of a response.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'
import { requestBuffered } from './buffered-request.js'
import type { BufferedRequestOptions } from './buffered-request.js'

/** A streamed response, for watches. The caller must consume or destroy `body`. */
export interface KubeStream {
  readonly statusCode: number
  readonly body: Dispatcher.ResponseData['body']
}

/** One answer of the server to a request, however its body is read. */
export interface Answer<T> {
  readonly statusCode: number
  readonly headers: IncomingHttpHeaders
  /** The whole body as text, for the Status of an error. */
  text(): Promise<string>
  /** The caller's result of a 2xx; `release` lets go of the request's deadline once the body is done. */
  success(release: () => void): T
}

/** Sends one request and returns the server's answer, read whole or as a stream. */
export type Exchange<T> = (
  dispatcher: Dispatcher,
  options: BufferedRequestOptions
) => Promise<Answer<T>>

/** JSON and text requests: the body read whole, without a stream (see buffered-request.ts). */
export const bufferedExchange: Exchange<Buffer> = async (dispatcher, options) => {
  const response = await requestBuffered(dispatcher, options)
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    text: () => Promise.resolve(response.body.toString('utf8')),
    success: (release) => {
      release()
      return response.body
    },
  }
}

/** Watches: the open body, whose end lets go of the deadline. */
export const streamedExchange: Exchange<KubeStream> = async (dispatcher, options) => {
  // Straight to the dispatcher: origin and path are already apart, no URL to join and parse again.
  const response = await dispatcher.request({
    ...options,
    // Watches stay open for minutes; their idle detection is the informer's job.
    bodyTimeout: 0,
  })
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    text: () => response.body.text(),
    success: (release) => {
      response.body.once('close', release)
      return { statusCode: response.statusCode, body: response.body }
    },
  }
}
