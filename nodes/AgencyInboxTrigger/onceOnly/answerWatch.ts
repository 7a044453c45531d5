/**
 * n8n's answer to a delivery, as the process that accepted it sees it. n8n ends the response when the
 * run the delivery started has ended (responseMode 'lastNode'), also after the sender stopped waiting
 * (the service waits about 15 s) and also when the sender had hung up before webhook() was called (a
 * busy n8n): its 'close' has fired already then, and 'finish' never fires. Node emits 'prefinish'
 * whenever the response is ended, whether the sender still listens or not (Node 20 and 24), so the
 * answer is seen without a timer. A response n8n never ends (the process crashed) is never answered.
 */

/** What the trigger reads of n8n's response object (an Express response). */
export interface WatchedResponse {
	statusCode: number;
	once?(event: 'prefinish' | 'finish', listener: () => void): unknown;
}

/** Calls `onAnswer` once with the status n8n answered the delivery with. */
export function watchAnswer(response: WatchedResponse, onAnswer: (status: number) => void): void {
	if (typeof response.once !== 'function') return;
	let answered = false;
	const answer = () => {
		if (answered) return;
		answered = true;
		onAnswer(response.statusCode);
	};
	response.once('prefinish', answer);
	response.once('finish', answer);
}
